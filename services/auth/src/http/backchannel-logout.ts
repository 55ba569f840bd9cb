import type Koa from 'koa';
import { AppError, badRequest } from '@sp/core';
import { readBody } from '@sp/http';
import type { LogoutTarget } from '../oidc/logout-token.js';
import type { AuthServices } from '../services.js';

/** What backchannelLogout uses. */
export type BackchannelLogoutDeps = Pick<AuthServices, 'userSessions' | 'verifyLogoutToken' | 'sessionMetrics' | 'logger'>;

/** Largest form body accepted (413 above); a Logout Token is about 1 KB. */
export const FORM_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * POST /backchannel-logout (OpenID Connect Back-Channel Logout 1.0): Keycloak posts a Logout Token
 * when a user's Keycloak session ends. A valid one (logout-token.ts) ends every session of that
 * Keycloak session (`sid`), or every session of that user (`sub`) when it names no session, on
 * every replica; nothing is revoked at Keycloak, whose session is already over. 200 with no body,
 * also when no session matched (it may have ended already); an invalid token is 400 and ends nothing.
 */
export function backchannelLogout(deps: BackchannelLogoutDeps): Koa.Middleware {
  const verified = async (token: string | null): Promise<LogoutTarget> => {
    try {
      if (token === null || token === '') throw badRequest('logout_token is required');
      const target = await deps.verifyLogoutToken(token);
      deps.sessionMetrics.backchannel('accepted');
      return target;
    } catch (err) {
      if (err instanceof AppError && err.status === 400) deps.sessionMetrics.backchannel('invalid');
      throw err;
    }
  };
  return async (ctx) => {
    const form = new URLSearchParams((await readBody(ctx, { limitBytes: FORM_BODY_LIMIT_BYTES, types: ['application/x-www-form-urlencoded'] })).toString('utf8'));
    const token = form.get('logout_token');
    const { sid, sub } = await verified(token);
    const subject = sub ?? (await deps.userSessions.subjectOfIdpSession(sid!));
    const sessions = subject === undefined ? [] : await deps.userSessions.list(subject);
    const ending = sessions.filter(({ record }) => sid === undefined || record.idpSessionId === sid);
    await Promise.all(ending.map(({ tokenId }) => deps.userSessions.end(tokenId, { revoke: false, reason: 'backchannel' })));
    deps.logger.info({ ended: ending.length, by: sid === undefined ? 'sub' : 'sid' }, 'back-channel logout');
    ctx.status = 200;
    ctx.body = '';
  };
}
