import type Koa from 'koa';
import { ipRateLimitKey } from './client-ip.js';
import { sendSmsNotificationEvent } from './events.js';
import { readJsonObject } from './json-body.js';
import { resolveLocale } from './locale.js';
import { newOtpSecret, otpCode } from './otp-codes.js';
import { normalizePhoneNumber } from './phone.js';
import type { AuthServices, AuthSettings } from './services.js';

/** What requestOtp uses. */
export type RequestOtpDeps = Pick<AuthServices, 'limiter' | 'otps' | 'publisher' | 'logger' | 'metrics' | 'now'> & { settings: Pick<AuthSettings, 'locales' | 'kafka' | 'environment'> };

/**
 * POST /otp {phoneNumber, locale?}: validate and normalize the number (400), apply the resend
 * limits (429), store a fresh secret with its attempt tokens, publish SendSmsNotificationEvent.
 * When the code cannot be stored or its event cannot be published, the secret is removed again and
 * the caller gets 503, so no code exists that was never sent; the admission is given back (cooldown
 * lifted, one returned to the number's and the IP's budgets), so the caller may retry at once.
 */
export function requestOtp(deps: RequestOtpDeps): Koa.Middleware {
  return async (ctx) => {
    const body = await readJsonObject(ctx);
    const phoneNumber = normalizePhoneNumber(body.phoneNumber);
    const locale = resolveLocale(body.locale, ctx.get('accept-language'), deps.settings.locales);
    const admission = await deps.limiter.admit(phoneNumber, ipRateLimitKey(ctx.ip));
    const secret = newOtpSecret();
    const code = await otpCode(secret, deps.now());
    try {
      await deps.otps.issue(phoneNumber, secret);
      await deps.publisher.publish(deps.settings.kafka.notificationsTopic, sendSmsNotificationEvent({ phoneNumber, code, locale }));
    } catch (err) {
      const undo = await Promise.allSettled([deps.otps.discard(phoneNumber), deps.limiter.release(admission)]);
      for (const outcome of undo) if (outcome.status === 'rejected') deps.logger.error({ err: outcome.reason as unknown }, 'removing an unsent code failed');
      throw err;
    }
    deps.metrics.otpIssued();
    ctx.body = deps.settings.environment === 'Development' ? { code } : {};
  };
}
