import type Koa from 'koa';
import { badRequest } from '@sp/platform';
import { newLoginState, newPkcePair } from './oidc-state.js';
import type { AuthServices } from './services.js';

/** A query parameter given exactly once, else undefined. */
export function singleQueryValue(ctx: Koa.Context, name: string): string | undefined {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : undefined;
}

/**
 * GET /login?redirectUri=…: the redirect URI must be on the allowlist (else 400, never a
 * redirect). A PKCE S256 pair is made, the state (base64url JSON of the redirect URI and a
 * 256-bit nonce) names the verifier's cache record `oidc:{state}`, and the browser goes to
 * Keycloak's authorization endpoint (302).
 */
export function startLogin(s: AuthServices): Koa.Middleware {
  return async (ctx) => {
    const requested = singleQueryValue(ctx, 'redirectUri');
    if (requested === undefined || requested === '') throw badRequest('redirectUri is required');
    const redirectUri = s.settings.allowedRedirects.check(requested);
    if (redirectUri === undefined) throw badRequest('redirectUri is not allowed');
    const pkce = newPkcePair();
    const { state, nonce } = newLoginState(redirectUri);
    await s.cache.set(`oidc:${state}`, pkce.verifier, s.settings.oidc.stateTtlSeconds * 1000);
    const authorizationUrl = await s.identityProvider.authorizationUrl({ state, nonce, codeChallenge: pkce.challenge });
    ctx.status = 302;
    ctx.set('Location', authorizationUrl.href);
  };
}
