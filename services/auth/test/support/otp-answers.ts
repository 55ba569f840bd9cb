import { expect } from '@jest/globals';
import type { OtpRefusalReason } from '../../src/otp/otp-refusals.js';
import type { RunningAuth } from './auth-fixture.js';
import type { Reply } from './https-client.js';

/**
 * A refusal of POST /otp: the status, `{"error", "reason"}` with that reason, and Retry-After
 * between 1 and `maxRetryAfter` seconds, or none when `maxRetryAfter` is undefined (waiting does not help).
 */
export function expectRefused(reply: Reply, status: number, reason: OtpRefusalReason, maxRetryAfter?: number): void {
  expect({ status: reply.status, body: reply.json() }).toEqual({ status, body: { error: expect.any(String), reason } });
  const retryAfter = reply.headers.get('retry-after');
  if (maxRetryAfter === undefined) {
    expect(retryAfter).toBeNull();
    return;
  }
  expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(retryAfter)).toBeLessThanOrEqual(maxRetryAfter);
}

/**
 * Fails unless exactly `expected` of `replies` were admitted (200), naming every other answer by
 * status and body with their counts: a wrong count says what came instead (jest's diffs leave out
 * what an asymmetric matcher or `toMatchObject` accepted).
 */
export function expectAdmitted(replies: readonly Reply[], expected: number): void {
  const admitted = replies.filter((r) => r.status === 200).length;
  const others: Record<string, number> = {};
  for (const reply of replies.filter((r) => r.status !== 200)) {
    const answer = `${reply.status} ${reply.text}`;
    others[answer] = (others[answer] ?? 0) + 1;
  }
  if (admitted !== expected) throw new Error(`${admitted} of ${replies.length} admitted, ${expected} expected; the others: ${JSON.stringify(others)}`);
}

/** A counter in the cache service the instance uses; 0 when absent (never taken, or given back). */
export async function cacheCounter(auth: RunningAuth, key: string): Promise<number> {
  return Number((await auth.cache.get(key)) ?? 0);
}

/** What a refused request must have left behind: nothing of its number's (no cooldown, no count). */
export async function expectNothingSpentFor(auth: RunningAuth, phoneNumber: string): Promise<void> {
  expect({ phoneNumber, cooldown: await auth.cache.get(`otp:${phoneNumber}:cooldown`), count: await cacheCounter(auth, `ratelimit:otp:phone:${phoneNumber}`), secret: await auth.cache.get(`otp:${phoneNumber}:secret`) }).toEqual({
    phoneNumber,
    cooldown: undefined,
    count: 0,
    secret: undefined,
  });
}
