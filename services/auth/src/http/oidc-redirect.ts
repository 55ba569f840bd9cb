import type Koa from 'koa';
import { AppError, badRequest } from '@sp/core';
import { resolveLocale } from './locale.js';
import { singleQueryValue } from './login.js';
import { bindingCookieName, carriesBinding, clearedBindingCookie, redirectPath } from './login-binding.js';
import { isStateRecord, parseLoginState } from '../oidc/oidc-state.js';
import { readCookie } from '../sessions/session-cookie.js';
import { normalizePhoneNumber } from '../otp/phone.js';
import type { AuthServices, AuthSettings } from '../services.js';
import type { LoginTokens } from '../oidc/identity-provider.js';

const NOT_THIS_BROWSER = 'the login was not started in this browser';

/**
 * The verifier of a state, taken exactly once (of two concurrent uses only one removes it), and
 * only by the browser that started the login: a request without its binding cookie is refused
 * before the record is touched, so the login's own browser can still finish it.
 */
async function takeVerifier(deps: FinishLoginDeps, ctx: Koa.Context, state: string): Promise<string> {
  if (readCookie(ctx.headers, bindingCookieName(state)) === undefined) throw badRequest(NOT_THIS_BROWSER);
  const key = `oidc:${state}`;
  const record = await deps.cache.get(key);
  if (!isStateRecord(record)) throw badRequest('unknown, expired or already used state');
  if (!carriesBinding(ctx.headers, state, record.binding)) throw badRequest(NOT_THIS_BROWSER);
  if (!(await deps.cache.remove(key))) throw badRequest('unknown, expired or already used state');
  return record.verifier;
}

/** The account's phone number (E.164), or a 400 after ending the Keycloak session just opened. */
async function phoneOf(deps: FinishLoginDeps, tokens: LoginTokens): Promise<string> {
  try {
    return normalizePhoneNumber(tokens.phoneNumber);
  } catch {
    if (tokens.refreshToken !== undefined) await deps.identityProvider.revoke(tokens.refreshToken).catch(() => undefined);
    throw badRequest('the account has no valid phone number');
  }
}

/** What finishLogin uses. */
export type FinishLoginDeps = Pick<AuthServices, 'cache' | 'identityProvider' | 'completeLogin' | 'metrics'> & { settings: Pick<AuthSettings, 'allowedRedirects' | 'publicBaseUrl' | 'locales'> };

/**
 * GET /redirect?code&state: the state must parse and name a live verifier, which is removed on
 * first use (unknown, expired, forged or replayed state: 400), and the request must carry the
 * login's browser binding cookie (another browser: 400), which is cleared. The code is exchanged with PKCE;
 * openid-client checks state, nonce and the ID token, whose phone_number and locale claims
 * describe the login. Token cached, cookie set, UserLoggedInEvent published, then 302 back to
 * the redirect URI the login started with (checked against the allowlist once more).
 */
export function finishLogin(deps: FinishLoginDeps): Koa.Middleware {
  return async (ctx) => {
    try {
      const state = singleQueryValue(ctx, 'state');
      const login = parseLoginState(state);
      const codeVerifier = await takeVerifier(deps, ctx, state!);
      const redirectUri = deps.settings.allowedRedirects.check(login.redirectUri);
      if (redirectUri === undefined) throw badRequest('redirectUri is not allowed');
      const callbackUrl = new URL(`${deps.settings.publicBaseUrl}/redirect${ctx.search}`);
      const tokens = await deps.identityProvider.exchangeCode({ callbackUrl, state: state!, nonce: login.nonce, codeVerifier });
      const phoneNumber = await phoneOf(deps, tokens);
      const locale = resolveLocale(tokens.locale, undefined, deps.settings.locales);
      await deps.completeLogin(ctx, tokens, { phoneNumber, locale, method: 'oidc' });
      // Dead with its state record anyway; a refusal sets no cookie at all, so only success clears it.
      ctx.append('Set-Cookie', clearedBindingCookie(state!, redirectPath(deps.settings.publicBaseUrl)));
      ctx.status = 302;
      ctx.set('Location', redirectUri);
      deps.metrics.login('oidc', 'success');
    } catch (err) {
      deps.metrics.login('oidc', err instanceof AppError && err.status < 500 ? 'rejected' : 'error');
      throw err;
    }
  };
}
