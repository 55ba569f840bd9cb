import type Koa from 'koa';
import { badRequest } from '@sp/core';
import { sendToIdentityProvider, singleQueryValue, type StartLoginDeps } from './login.js';
import { readSessionCookie } from '../sessions/session-cookie.js';
import type { AuthServices, AuthSettings } from '../services.js';

/** What signIn uses. */
export type SignInDeps = StartLoginDeps & Pick<AuthServices, 'tokens' | 'sessions' | 'now'> & { settings: Pick<AuthSettings, 'signInPageUrl'> };

/** The sign-in page's URL with `rd` set (any `rd` it was configured with replaced). */
function signInPage(pageUrl: string, rd: string): string {
  const url = new URL(pageUrl);
  url.searchParams.set('rd', rd);
  return url.href;
}

/**
 * GET /signin?rd=<page>: where a reverse proxy sends a browser without a session (ingress-nginx's
 * `auth-signin`, which appends `rd`; GET /auth's redirect for Traefik and Caddy). `rd` must be on
 * Auth__AllowedRedirectUris (else 400, never a redirect). A browser whose session GET /auth would
 * pass goes straight back to `rd` (a sign-in page calls this after its one-time password login,
 * a second tab after the first signed in); otherwise to Auth__SignInPageUrl with `rd`, or, without
 * one, through the Keycloak login, which ends at `rd` with the cookie set (GET /redirect).
 */
export function signIn(deps: SignInDeps): Koa.Middleware {
  return async (ctx) => {
    const requested = singleQueryValue(ctx, 'rd');
    if (requested === undefined || requested === '') throw badRequest('rd is required');
    const rd = deps.settings.allowedRedirects.check(requested);
    if (rd === undefined) throw badRequest('rd is not allowed');
    const tokenId = readSessionCookie(ctx.req.headers);
    const session = await deps.sessions.current(tokenId, await deps.tokens.get(tokenId));
    if (session !== undefined && session.expiresAtMs > deps.now()) {
      ctx.status = 302;
      ctx.set('Location', rd);
    } else if (deps.settings.signInPageUrl !== undefined) {
      ctx.status = 302;
      ctx.set('Location', signInPage(deps.settings.signInPageUrl, rd));
    } else {
      await sendToIdentityProvider(deps, ctx, rd);
    }
  };
}
