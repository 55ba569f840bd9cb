import type Koa from 'koa';
import { badRequest } from '@sp/core';
import { bindingCookie, newLoginBinding, redirectPath } from './login-binding.js';
import { newLoginState, newPkcePair, type StateRecord } from '../oidc/oidc-state.js';
import type { AuthServices, AuthSettings } from '../services.js';

/** A query parameter given exactly once, else undefined. */
export function singleQueryValue(ctx: Koa.Context, name: string): string | undefined {
  const value = ctx.query[name];
  return typeof value === 'string' ? value : undefined;
}

/** What startLogin uses. */
export type StartLoginDeps = Pick<AuthServices, 'cache' | 'identityProvider'> & { settings: Pick<AuthSettings, 'allowedRedirects' | 'oidc' | 'publicBaseUrl'> };

/**
 * GET /login?redirectUri=…: the redirect URI must be on the allowlist (else 400, never a
 * redirect). A PKCE S256 pair is made, the state (base64url JSON of the redirect URI and a
 * 256-bit nonce) names the cache record `oidc:{state}` of the verifier and the hash of the login's
 * browser binding (login-binding.ts), whose cookie is set, and the browser goes to Keycloak's
 * authorization endpoint (302).
 */
export function startLogin(deps: StartLoginDeps): Koa.Middleware {
  return async (ctx) => {
    const requested = singleQueryValue(ctx, 'redirectUri');
    if (requested === undefined || requested === '') throw badRequest('redirectUri is required');
    const redirectUri = deps.settings.allowedRedirects.check(requested);
    if (redirectUri === undefined) throw badRequest('redirectUri is not allowed');
    await sendToIdentityProvider(deps, ctx, redirectUri);
  };
}

/**
 * The browser login to Keycloak for an allowed redirect URI: PKCE pair, state, the verifier's
 * record, the login's binding cookie and the 302 (GET /login, and GET /signin without a sign-in page).
 */
export async function sendToIdentityProvider(deps: StartLoginDeps, ctx: Koa.Context, redirectUri: string): Promise<void> {
  const pkce = newPkcePair();
  const { state, nonce } = newLoginState(redirectUri);
  const binding = newLoginBinding();
  const ttlSeconds = deps.settings.oidc.stateTtlSeconds;
  await deps.cache.set(`oidc:${state}`, { verifier: pkce.verifier, binding: binding.hash } satisfies StateRecord, ttlSeconds * 1000);
  const authorizationUrl = await deps.identityProvider.authorizationUrl({ state, nonce, codeChallenge: pkce.challenge });
  ctx.append('Set-Cookie', bindingCookie(state, binding.secret, { path: redirectPath(deps.settings.publicBaseUrl), maxAgeSeconds: ttlSeconds }));
  ctx.status = 302;
  ctx.set('Location', authorizationUrl.href);
}
