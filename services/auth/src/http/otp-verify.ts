import type Koa from 'koa';
import { AppError, badRequest } from '@sp/core';
import type { Role } from '../config.js';
import type { VerificationResult } from '../auth-metrics.js';
import { readJsonObject } from './json-body.js';
import { resolveLocale } from './locale.js';
import { checkPhoneCode, REFUSALS } from '../otp/otp-check.js';
import { isOtpCodeFormat } from '../otp/otp-codes.js';
import { parsePhoneNumber } from '../otp/phone.js';
import type { AuthServices, AuthSettings } from '../services.js';
import { loginByPhone } from '../users/user-provisioning.js';

const ROLES: ReadonlySet<string> = new Set<Role>(['client', 'subscriber']);

function roleOf(ctx: Koa.Context): Role {
  const header = ctx.get('x-role-claim');
  if (header === '') throw badRequest('X-Role-Claim header is required');
  if (!ROLES.has(header)) throw badRequest('X-Role-Claim must be client or subscriber');
  return header as Role;
}

/** What verifyOtp uses. */
export type VerifyOtpDeps = Pick<AuthServices, 'otps' | 'users' | 'identityProvider' | 'cache' | 'completeLogin' | 'metrics' | 'now'> & { settings: Pick<AuthSettings, 'otp' | 'locales' | 'groups' | 'oidc'> };

/**
 * POST /otp/verify {phoneNumber, code, locale?} with X-Role-Claim: every refusal is
 * 400 {"error": message} and sets no cookie. On success the user is provisioned in Keycloak,
 * a token obtained and cached, the TokenId cookie set and UserLoggedInEvent published.
 */
export function verifyOtp(deps: VerifyOtpDeps): Koa.Middleware {
  return async (ctx) => {
    let result: VerificationResult = 'bad_request';
    try {
      const role = roleOf(ctx);
      const body = await readJsonObject(ctx);
      const phone = parsePhoneNumber(body.phoneNumber);
      const phoneNumber = phone.number;
      if (!isOtpCodeFormat(body.code)) throw badRequest('code must be a string of 6 digits');
      result = await checkPhoneCode(deps.otps, { phoneNumber, code: body.code, nowMs: deps.now(), maxAttempts: deps.settings.otp.maxAttempts });
      if (result !== 'success') throw badRequest(REFUSALS[result]);
      // The SMS reached someone who typed the code: the conversion the pumping alert watches per country.
      deps.metrics.otpVerified(phone.country);
      const locale = resolveLocale(body.locale, ctx.get('accept-language'), deps.settings.locales);
      const tokens = await loginByPhone({ ...deps, keycloakTimeoutMs: deps.settings.oidc.timeoutMs }, { phoneNumber, locale, group: deps.settings.groups[role] });
      const userLocale = resolveLocale(tokens.locale, undefined, { supported: deps.settings.locales.supported, fallback: locale });
      await deps.completeLogin(ctx, tokens, { phoneNumber, locale: userLocale, method: 'otp', role });
      ctx.body = {};
      deps.metrics.login('otp', 'success');
    } catch (err) {
      deps.metrics.login('otp', err instanceof AppError && err.status < 500 ? 'rejected' : 'error');
      throw err;
    } finally {
      deps.metrics.otpVerification(result);
    }
  };
}
