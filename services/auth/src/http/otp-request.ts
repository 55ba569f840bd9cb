import type Koa from 'koa';
import { ipRateLimitKey } from '../otp/client-ip.js';
import { loginCodeSmsEvent } from '../events.js';
import { readJsonObject } from './json-body.js';
import { resolveLocale } from './locale.js';
import { newOtpSecret, otpCode } from '../otp/otp-codes.js';
import { checkOtpPolicy, numberPrefix } from '../otp/otp-policy.js';
import { otpRefusalReason } from '../otp/otp-refusals.js';
import { parsePhoneNumber } from '../otp/phone.js';
import type { Admission } from '../otp/rate-limiter.js';
import type { AuthServices, AuthSettings } from '../services.js';

/** What requestOtp uses. */
export type RequestOtpDeps = Pick<AuthServices, 'limiter' | 'otps' | 'publisher' | 'logger' | 'metrics' | 'now'> & { settings: Pick<AuthSettings, 'locales' | 'kafka' | 'environment' | 'otpFraud'> };

/**
 * POST /otp {phoneNumber, locale?}: validate and normalize the number (400), apply the policies
 * (country 403, number type 422) and then the limits (429; the platform's SMS budget 503), store a
 * fresh secret with its attempt tokens, publish SendSmsNotificationEvent. Policies come first and
 * need no counter, so a refused number spends nothing; the limits give back what they took when a
 * later one refuses (rate-limiter.ts). When the code cannot be stored or its event cannot be
 * published, the secret is removed again and the caller gets 503, so no code exists that was never
 * sent; the admission is given back (cooldown lifted, one returned to every budget), so the caller
 * may retry at once.
 */
export function requestOtp(deps: RequestOtpDeps): Koa.Middleware {
  return async (ctx) => {
    const { otpFraud } = deps.settings;
    const body = await readJsonObject(ctx);
    const phone = parsePhoneNumber(body.phoneNumber);
    const phoneNumber = phone.number;
    const locale = resolveLocale(body.locale, ctx.get('accept-language'), deps.settings.locales);
    const prefix = numberPrefix(phone, otpFraud.prefixDigits);
    let admission: Admission;
    let monitored: boolean;
    try {
      ({ monitored } = checkOtpPolicy(otpFraud, phone));
      admission = await deps.limiter.admit({ phone: phoneNumber, ip: ipRateLimitKey(ctx.ip), prefix });
    } catch (err) {
      const reason = otpRefusalReason(err);
      if (reason !== undefined) deps.metrics.otpRefused(reason);
      throw err;
    }
    const secret = newOtpSecret();
    const code = await otpCode(secret, deps.now());
    try {
      await deps.otps.issue(phoneNumber, secret);
      await deps.publisher.publish(deps.settings.kafka.notificationsTopic, loginCodeSmsEvent({ phoneNumber, code, locale }));
    } catch (err) {
      const undo = await Promise.allSettled([deps.otps.discard(phoneNumber, secret), deps.limiter.release(admission)]);
      for (const outcome of undo) if (outcome.status === 'rejected') deps.logger.error({ err: outcome.reason as unknown }, 'removing an unsent code failed');
      throw err;
    }
    deps.metrics.otpSent(phone.country, monitored);
    // The prefix, not the number: enough to see a pumped range, without a subscriber's number in the logs.
    if (monitored) deps.logger.warn({ country: phone.country, prefix, numberType: phone.type }, 'code sent to a number of a monitored country');
    ctx.body = deps.settings.environment === 'Development' ? { code } : {};
  };
}
