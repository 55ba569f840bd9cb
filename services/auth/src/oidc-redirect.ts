import type Koa from 'koa';
import { AppError, badRequest } from '@sp/platform';
import { resolveLocale } from './locale.js';
import { singleQueryValue } from './login.js';
import { parseLoginState } from './oidc-state.js';
import { normalizePhoneNumber } from './phone.js';
import type { AuthServices } from './services.js';
import type { LoginTokens } from './identity-provider.js';

/** The verifier of a state, taken exactly once: of two concurrent uses only one removes it. */
async function takeVerifier(s: AuthServices, state: string): Promise<string> {
  const key = `oidc:${state}`;
  const verifier = await s.cache.get(key);
  if (typeof verifier !== 'string' || !(await s.cache.remove(key))) throw badRequest('unknown, expired or already used state');
  return verifier;
}

/** The account's phone number (E.164), or a 400 after ending the Keycloak session just opened. */
async function phoneOf(s: AuthServices, tokens: LoginTokens): Promise<string> {
  try {
    return normalizePhoneNumber(tokens.phoneNumber);
  } catch {
    if (tokens.refreshToken !== undefined) await s.identityProvider.revoke(tokens.refreshToken).catch(() => undefined);
    throw badRequest('the account has no valid phone number');
  }
}

/**
 * GET /redirect?code&state: the state must parse and name a live verifier, which is removed on
 * first use (unknown, expired, forged or replayed state: 400). The code is exchanged with PKCE;
 * openid-client checks state, nonce and the ID token, whose phone_number and locale claims
 * describe the login. Token cached, cookie set, UserLoggedInEvent published, then 302 back to
 * the redirect URI the login started with (checked against the allowlist once more).
 */
export function finishLogin(s: AuthServices): Koa.Middleware {
  return async (ctx) => {
    try {
      const state = singleQueryValue(ctx, 'state');
      const login = parseLoginState(state);
      const codeVerifier = await takeVerifier(s, state!);
      const redirectUri = s.settings.allowedRedirects.check(login.redirectUri);
      if (redirectUri === undefined) throw badRequest('redirectUri is not allowed');
      const callbackUrl = new URL(`${s.settings.publicBaseUrl}/redirect${ctx.search}`);
      const tokens = await s.identityProvider.exchangeCode({ callbackUrl, state: state!, nonce: login.nonce, codeVerifier });
      const phoneNumber = await phoneOf(s, tokens);
      const locale = resolveLocale(tokens.locale, undefined, s.settings.locales);
      await s.completeLogin(ctx, tokens, { phoneNumber, locale, method: 'oidc' });
      ctx.status = 302;
      ctx.set('Location', redirectUri);
      s.metrics.login('oidc', 'success');
    } catch (err) {
      s.metrics.login('oidc', err instanceof AppError && err.status < 500 ? 'rejected' : 'error');
      throw err;
    }
  };
}
