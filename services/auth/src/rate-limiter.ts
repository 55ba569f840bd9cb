import { tooManyRequests } from '@sp/platform';
import type { CacheClient } from '@sp/cache-client';
import type { OtpLimits } from './config.js';

/** Which limit refused a request (label of rate_limited_total). */
export type LimitScope = 'phone_cooldown' | 'phone' | 'ip';

interface Window {
  count: number;
  resetAtMs: number;
}

function isWindow(value: unknown): value is Window {
  return typeof value === 'object' && value !== null && typeof (value as Window).count === 'number' && typeof (value as Window).resetAtMs === 'number';
}

export interface OtpRateLimiter {
  /** Admits one code for `phone` requested from `ipKey`, or throws 429 with Retry-After. */
  admit(phone: string, ipKey: string): Promise<void>;
  /** Lifts the phone's cooldown again (the code could not be sent, so the caller may retry). */
  releaseCooldown(phone: string): Promise<void>;
}

/**
 * Resend limits kept in the cache service, so every replica sees the same counts:
 *   otp:{phone}:cooldown        the end of the phone's cooldown (Unix ms), TTL = the cooldown
 *   ratelimit:otp:phone:{phone} {count, resetAtMs}: codes in the window that began with the first one
 *   ratelimit:otp:ip:{ip}       the same per client IP (IPv6 per /64)
 * The cache has no atomic increment, so a count is read and written back: requests that arrive
 * at the same instant can read the same count, and a burst may exceed a limit by the number of
 * requests in flight at once. Sequential requests (any real client) are limited exactly.
 */
export function createOtpRateLimiter(
  cache: CacheClient<unknown>,
  limits: OtpLimits,
  options: { now: () => number; onLimited: (scope: LimitScope) => void },
): OtpRateLimiter {
  const windowMs = limits.windowSeconds * 1000;
  const cooldownKey = (phone: string): string => `otp:${phone}:cooldown`;
  const phoneKey = (phone: string): string => `ratelimit:otp:phone:${phone}`;
  const ipKey = (ip: string): string => `ratelimit:otp:ip:${ip}`;

  const refuse = (scope: LimitScope, untilMs: number, now: number): never => {
    options.onLimited(scope);
    throw tooManyRequests((untilMs - now) / 1000);
  };

  const checkWindow = (scope: LimitScope, window: Window | undefined, max: number, now: number): void => {
    if (window !== undefined && window.resetAtMs > now && window.count >= max) refuse(scope, window.resetAtMs, now);
  };

  const bump = async (key: string, window: Window | undefined, now: number): Promise<void> => {
    const next = window !== undefined && window.resetAtMs > now ? { count: window.count + 1, resetAtMs: window.resetAtMs } : { count: 1, resetAtMs: now + windowMs };
    await cache.set(key, next, next.resetAtMs - now);
  };

  return {
    async admit(phone, ip) {
      const now = options.now();
      const [cooldown, phoneWindow, ipWindow] = await Promise.all([cache.get(cooldownKey(phone)), cache.get(phoneKey(phone)), cache.get(ipKey(ip))]);
      if (typeof cooldown === 'number' && cooldown > now) refuse('phone_cooldown', cooldown, now);
      const perPhone = isWindow(phoneWindow) ? phoneWindow : undefined;
      const perIp = isWindow(ipWindow) ? ipWindow : undefined;
      checkWindow('phone', perPhone, limits.maxPerPhone, now);
      checkWindow('ip', perIp, limits.maxPerIp, now);
      const cooldownMs = limits.cooldownSeconds * 1000;
      await Promise.all([
        cooldownMs > 0 ? cache.set(cooldownKey(phone), now + cooldownMs, cooldownMs) : Promise.resolve(),
        bump(phoneKey(phone), perPhone, now),
        bump(ipKey(ip), perIp, now),
      ]);
    },
    async releaseCooldown(phone) {
      await cache.remove(cooldownKey(phone));
    },
  };
}
