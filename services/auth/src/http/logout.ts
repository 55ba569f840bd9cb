import type Koa from 'koa';
import { clearedSessionCookie, readSessionCookie } from '../sessions/session-cookie.js';
import type { AuthServices } from '../services.js';

/** What logout uses. */
export type LogoutDeps = Pick<AuthServices, 'userSessions'>;

/**
 * POST /logout: removes the session (after a renewal in progress, which would write it back), revokes its refresh token at Keycloak (which ends the
 * Keycloak session) and clears the cookie; 204 whether or not there was a session. A failed
 * revocation is logged, not returned: the token is already unreachable through this service.
 *
 * The cookie is cleared only on a request that carried it, so only together with the session it
 * names: a cross-site form post (logout CSRF) arrives without the SameSite=Lax cookie, ends
 * nothing and must not sign the browser out of a session that stays live.
 */
export function logout(deps: LogoutDeps): Koa.Middleware {
  return async (ctx) => {
    const tokenId = readSessionCookie(ctx.headers);
    await deps.userSessions.end(tokenId, { revoke: true, reason: 'logout' });
    if (tokenId !== undefined) ctx.append('Set-Cookie', clearedSessionCookie());
    ctx.status = 204;
  };
}
