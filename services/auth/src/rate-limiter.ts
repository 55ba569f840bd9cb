import { randomUUID } from 'node:crypto';
import { tooManyRequests } from '@sp/platform';
import type { CacheClient } from '@sp/cache-client';
import type { OtpLimits } from './config.js';

/** Which limit refused a request (label of rate_limited_total). */
export type LimitScope = 'phone_cooldown' | 'phone' | 'ip';

/** What one admitted request holds, to give back when its code could not be sent. */
export interface Admission {
  phone: string;
  ip: string;
  cooldownId: string;
}

export interface OtpRateLimiter {
  /** Admits one code for `phone` requested from `ip`, or throws 429 with Retry-After. */
  admit(phone: string, ip: string): Promise<Admission>;
  /** Gives an admission back: its code was never sent, so it counts against no limit. */
  release(admission: Admission): Promise<void>;
}

interface Cooldown {
  id: string;
  untilMs: number;
}

const isCooldown = (value: unknown): value is Cooldown => typeof value === 'object' && value !== null && typeof (value as Cooldown).untilMs === 'number';

/**
 * Resend limits kept in the cache service with its atomic operations, so they are exact under any
 * concurrency and across replicas:
 *   otp:{phone}:cooldown        SetIfAbsent {id, untilMs}, TTL = the cooldown: one code at a time
 *   ratelimit:otp:phone:{phone} Increment, a fixed window that starts with the number's first code
 *   ratelimit:otp:ip:{ip}       the same per client IP (IPv6 per /64)
 * Checked in that order, each step only once the one before admitted the request: a number in its
 * cooldown spends nothing, and a request refused for its IP hands the number's budget back, so
 * nobody can exhaust a victim's number from an IP that is already over its limit. Of N concurrent
 * requests against a limit of M, exactly M pass: each increment answers a distinct count.
 */
export function createOtpRateLimiter(
  cache: CacheClient<unknown>,
  limits: OtpLimits,
  options: { now: () => number; onLimited: (scope: LimitScope) => void },
): OtpRateLimiter {
  const windowMs = limits.windowSeconds * 1000;
  const cooldownMs = limits.cooldownSeconds * 1000;
  const cooldownKey = (phone: string): string => `otp:${phone}:cooldown`;
  const phoneKey = (phone: string): string => `ratelimit:otp:phone:${phone}`;
  const ipKey = (ip: string): string => `ratelimit:otp:ip:${ip}`;

  const refuse = (scope: LimitScope, untilMs: number): never => {
    options.onLimited(scope);
    throw tooManyRequests((untilMs - options.now()) / 1000);
  };

  /** Takes one from a window's budget; throws 429 (after giving it back) when none is left. */
  const take = async (scope: LimitScope, key: string, max: number): Promise<void> => {
    const counter = await cache.increment(key, 1, windowMs);
    if (counter.value <= max) return;
    refuse(scope, counter.expiresAtUnixMs);
  };

  // A give-back that finds its window gone creates a counter of -1 that lives 1 ms, not a bonus
  // for the next window: the TTL applies only to a counter the call creates.
  const giveBack = (key: string): Promise<unknown> => cache.increment(key, -1, 1);

  const removeCooldown = async (phone: string, id: string): Promise<void> => {
    const current = await cache.get(cooldownKey(phone));
    if (isCooldown(current) && current.id === id) await cache.remove(cooldownKey(phone));
  };

  return {
    async admit(phone, ip) {
      const cooldownId = randomUUID();
      if (cooldownMs > 0) {
        const claim = await cache.setIfAbsent(cooldownKey(phone), { id: cooldownId, untilMs: options.now() + cooldownMs }, cooldownMs);
        if (!claim.stored) refuse('phone_cooldown', isCooldown(claim.value) ? claim.value.untilMs : options.now() + cooldownMs);
      }
      await take('phone', phoneKey(phone), limits.maxPerPhone);
      try {
        await take('ip', ipKey(ip), limits.maxPerIp);
      } catch (err) {
        await Promise.all([giveBack(phoneKey(phone)), removeCooldown(phone, cooldownId)]);
        throw err;
      }
      return { phone, ip, cooldownId };
    },
    async release({ phone, ip, cooldownId }) {
      await Promise.all([giveBack(phoneKey(phone)), giveBack(ipKey(ip)), removeCooldown(phone, cooldownId)]);
    },
  };
}
