import { randomUUID } from 'node:crypto';
import type { CacheClient, CounterValue } from '@sp/cache-client';
import type { AppError } from '@sp/core';
import type { Logger } from '@sp/observability';
import type { OtpFraudControls, OtpLimits } from '../config.js';
import { otpRefusal, type OtpRefusalReason } from './otp-refusals.js';

/** Who asks for a code: the number (E.164), the client IP key and the number's prefix. */
export interface OtpRequester {
  phone: string;
  ip: string;
  prefix: string;
}

/** The record of a number's cooldown; its random id tells one admission's from the next. */
export interface Cooldown {
  id: string;
  untilMs: number;
}

/** What one admitted request holds, to give back when its code could not be sent. */
export interface Admission extends OtpRequester {
  /** The cooldown record it stored (none when the cooldown is 0). */
  cooldown: Cooldown | undefined;
}

export interface OtpRateLimiter {
  /** Admits one code, or throws the refusal (429, or 503 for the SMS budget) with Retry-After. */
  admit(requester: OtpRequester): Promise<Admission>;
  /** Gives an admission back: its code was never sent, so it counts against no limit. */
  release(admission: Admission): Promise<void>;
}

export type RateLimits = Pick<OtpLimits, 'cooldownSeconds' | 'maxPerPhone' | 'maxPerIp' | 'windowSeconds'> & Pick<OtpFraudControls, 'maxPerPrefix' | 'maxPerMinute'>;

/** The platform-wide budget's counter: one fixed window of a minute for all replicas. */
export const SMS_BUDGET_KEY = 'ratelimit:otp:budget';
const BUDGET_WINDOW_MS = 60_000;

/** One fixed-window counter a request must pass. */
interface Window {
  reason: OtpRefusalReason;
  key: string;
  max: number;
  windowMs: number;
}

const isCooldown = (value: unknown): value is Cooldown => typeof value === 'object' && value !== null && typeof (value as Cooldown).untilMs === 'number';

/**
 * Resend limits and the SMS budget, kept in the cache service with its atomic operations, so they
 * are exact under any concurrency and across replicas:
 *   otp:{phone}:cooldown           SetIfAbsent {id, untilMs}, TTL = the cooldown: one code at a time
 *   ratelimit:otp:phone:{phone}    Increment, a fixed window that starts with the number's first code
 *   ratelimit:otp:ip:{ip}          the same per client IP (IPv6 per /64)
 *   ratelimit:otp:prefix:{prefix}  the same per number prefix (+49151234): SMS pumping spreads over
 *                                  many numbers of one premium range, from many addresses
 *   ratelimit:otp:budget           the same for the whole platform, a window of one minute
 * Checked in that order, each step only once the ones before admitted the request, and a refusal
 * gives back what the steps before took (and lifts its own cooldown, by RemoveIfEquals of the
 * record it stored): a refused request spends
 * nothing. So an IP over its limit cannot exhaust a victim's number, a prefix under attack does
 * not use up its callers' own budgets, and a request refused for the platform's budget, which is
 * nobody's fault in particular, costs its number, IP and prefix nothing either; the caller may
 * come back after Retry-After. The budget comes last, so it is spent only by requests that every
 * other limit admitted. Of N concurrent requests against a limit of M, at most M pass, exactly M
 * when no later step refuses some: each increment answers a distinct count. A refused step keeps
 * its own increment (the counter stays over its limit until the window ends, one call saved).
 */
export function createOtpRateLimiter(cache: CacheClient<unknown>, limits: RateLimits, options: { now: () => number; logger: Logger }): OtpRateLimiter {
  const windowMs = limits.windowSeconds * 1000;
  const cooldownMs = limits.cooldownSeconds * 1000;
  const cooldownKey = (phone: string): string => `otp:${phone}:cooldown`;
  const windowsOf = ({ phone, ip, prefix }: OtpRequester): Window[] => [
    { reason: 'phone_limit', key: `ratelimit:otp:phone:${phone}`, max: limits.maxPerPhone, windowMs },
    { reason: 'ip_limit', key: `ratelimit:otp:ip:${ip}`, max: limits.maxPerIp, windowMs },
    { reason: 'prefix_limit', key: `ratelimit:otp:prefix:${prefix}`, max: limits.maxPerPrefix, windowMs },
    { reason: 'sms_budget_exhausted', key: SMS_BUDGET_KEY, max: limits.maxPerMinute, windowMs: BUDGET_WINDOW_MS },
  ];

  // A give-back that finds its window gone creates a counter of -1 that lives 1 ms, not a bonus
  // for the next window: the TTL applies only to a counter the call creates.
  const giveBack = (key: string): Promise<unknown> => cache.increment(key, -1, 1);

  // Only the record this admission stored, in one atomic step: a give-back that comes after it
  // expired and the next code's admission claimed the number leaves that one's cooldown alone.
  const removeCooldown = async (phone: string, cooldown: Cooldown | undefined): Promise<void> => {
    if (cooldown !== undefined) await cache.removeIfEquals(cooldownKey(phone), cooldown);
  };

  const undo = async (phone: string, cooldown: Cooldown | undefined, taken: readonly string[]): Promise<void> => {
    await Promise.all([...taken.map(giveBack), removeCooldown(phone, cooldown)]);
  };

  /** The refusal of a window found over its limit. */
  const refusal = (window: Window, counter: CounterValue): AppError => {
    // The first refusal of a budget window, whichever replica meets it: one line per minute at most.
    if (window.key === SMS_BUDGET_KEY && counter.value === window.max + 1) {
      options.logger.warn({ maxPerMinute: window.max, untilMs: counter.expiresAtUnixMs }, 'SMS budget exhausted: POST /otp answers 503 until the window ends');
    }
    return otpRefusal(window.reason, (counter.expiresAtUnixMs - options.now()) / 1000);
  };

  /** Takes one from each window in order; on a refusal, or a failure of the cache, gives back what it took. */
  const takeAll = async (requester: OtpRequester, cooldown: Cooldown | undefined): Promise<void> => {
    const taken: string[] = [];
    for (const window of windowsOf(requester)) {
      const counter = await cache.increment(window.key, 1, window.windowMs).catch(async (err: unknown) => {
        await undo(requester.phone, cooldown, taken).catch(() => undefined);
        throw err;
      });
      if (counter.value > window.max) {
        await undo(requester.phone, cooldown, taken);
        throw refusal(window, counter);
      }
      taken.push(window.key);
    }
  };

  return {
    async admit(requester) {
      const cooldown = cooldownMs > 0 ? { id: randomUUID(), untilMs: options.now() + cooldownMs } : undefined;
      if (cooldown !== undefined) {
        const claim = await cache.setIfAbsent(cooldownKey(requester.phone), cooldown, cooldownMs).catch(async (err: unknown) => {
          // An unknown outcome (a deadline passed, the answer was lost): the claim may have been
          // stored, and would hold the number for the whole cooldown with no code sent. Given back
          // like any other admission that fails: only this request's own record.
          await removeCooldown(requester.phone, cooldown).catch(() => undefined);
          throw err;
        });
        if (!claim.stored) throw otpRefusal('resend_cooldown', ((isCooldown(claim.value) ? claim.value.untilMs : options.now() + cooldownMs) - options.now()) / 1000);
      }
      await takeAll(requester, cooldown);
      return { ...requester, cooldown };
    },
    async release(admission) {
      await undo(admission.phone, admission.cooldown, windowsOf(admission).map((window) => window.key));
    },
  };
}
