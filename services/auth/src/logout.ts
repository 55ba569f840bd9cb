import type Koa from 'koa';
import { clearedSessionCookie, readSessionCookie } from './session-cookie.js';
import type { AuthServices } from './services.js';

/** What logout uses. */
export type LogoutDeps = Pick<AuthServices, 'userSessions'>;

/**
 * POST /logout: removes the session (after a renewal in progress, which would write it back), revokes its refresh token at Keycloak (which ends the
 * Keycloak session) and clears the cookie; 204 whether or not there was a session. A failed
 * revocation is logged, not returned: the token is already unreachable through this service.
 */
export function logout(deps: LogoutDeps): Koa.Middleware {
  return async (ctx) => {
    await deps.userSessions.end(readSessionCookie(ctx.headers), { revoke: true, reason: 'logout' });
    ctx.append('Set-Cookie', clearedSessionCookie());
    ctx.status = 204;
  };
}
