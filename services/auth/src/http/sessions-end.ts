import type Koa from 'koa';
import { badRequest, notFound } from '@sp/core';
import type { AuthServices } from '../services.js';
import { clearedSessionCookie } from '../sessions/session-cookie.js';
import { callerSession } from './user-session-auth.js';

/** What the DELETE /sessions endpoints use. */
export type EndSessionsDeps = Pick<AuthServices, 'tokens' | 'userSessions' | 'now'>;

/** A public session id: 128 bits, base64url. */
const SESSION_ID = /^[A-Za-z0-9_-]{22}$/;

/**
 * DELETE /sessions/{id}: ends one of the caller's own sessions, as a logout does (record removed
 * on every replica, refresh token revoked at Keycloak); 204, or 404 when the caller has no live
 * session of that id (another user's id is unknown here too). Ending the caller's own clears its cookie.
 */
export function endSession(deps: EndSessionsDeps): Koa.Middleware {
  return async (ctx) => {
    const id = (ctx as Koa.ParameterizedContext & { params: Record<string, string> }).params.id ?? '';
    const caller = await callerSession(ctx, deps);
    const target = SESSION_ID.test(id) ? (await deps.userSessions.list(caller.record.subject)).find(({ record }) => record.sessionId === id) : undefined;
    if (target === undefined) throw notFound('no such session');
    await deps.userSessions.end(target.tokenId, { revoke: true, reason: 'user' });
    if (target.tokenId === caller.tokenId) ctx.append('Set-Cookie', clearedSessionCookie());
    ctx.status = 204;
  };
}

/**
 * DELETE /sessions?scope=others|all: ends every other session of the caller (`others`), or every
 * one including the caller's own (`all`, which also clears its cookie), as logouts do; 204.
 */
export function endSessions(deps: EndSessionsDeps): Koa.Middleware {
  return async (ctx) => {
    const scope = ctx.query.scope;
    if (scope !== 'others' && scope !== 'all') throw badRequest('scope must be others or all');
    const caller = await callerSession(ctx, deps);
    const sessions = await deps.userSessions.list(caller.record.subject);
    const ending = sessions.filter(({ tokenId }) => scope === 'all' || tokenId !== caller.tokenId);
    // The caller's own among them (all): it still ends even if the user's index missed it.
    if (scope === 'all' && !ending.some(({ tokenId }) => tokenId === caller.tokenId)) ending.push(caller);
    await Promise.all(ending.map(({ tokenId }) => deps.userSessions.end(tokenId, { revoke: true, reason: 'user' })));
    if (scope === 'all') ctx.append('Set-Cookie', clearedSessionCookie());
    ctx.status = 204;
  };
}
