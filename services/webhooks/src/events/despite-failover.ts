import { poll, toAppError, type PollOptions } from '@sp/core';

/** The pause between two background tries: a recovering store is not hammered by every event in flight. */
const BACKGROUND_POLL_MS = 500;

export interface DespiteFailoverOptions extends PollOptions {
  /**
   * When the store is still out after `waitMs`: how much longer the call goes on in the background
   * (the rest of the claim's lease; default 0, none).
   */
  backgroundMs?: number;
}

/**
 * Repeats a claim holder's own bookkeeping (complete, release) while the store answers 503, for up
 * to `waitMs`: during a Redis failover the claim itself is usually on the promoted replica, and a
 * holder that gave up at once would leave it to block every redelivery of the event until the
 * lease ran out (minutes), then let the work run a second time. A failover can last longer than a
 * delivery may wait (Sentinel's default down-after alone is 30 s): past `waitMs` the outage is
 * thrown, so the delivery answers 503 and the provider retries, while the call goes on in the
 * background for `backgroundMs`, so the claim is completed or dropped as soon as the store is back
 * and the retry finds the event done or free. The calls must be idempotent.
 */
export async function despiteFailover(call: () => Promise<void>, options: DespiteFailoverOptions): Promise<void> {
  let outage: unknown;
  const done = await poll(async () => {
    try {
      await call();
      return true;
    } catch (err) {
      if (toAppError(err).status !== 503) throw err;
      outage = err;
      return undefined;
    }
  }, options);
  if (done !== undefined) return;
  const { backgroundMs = 0 } = options;
  if (backgroundMs > 0) {
    void despiteFailover(call, { ...options, waitMs: backgroundMs, pollMs: Math.max(options.pollMs, BACKGROUND_POLL_MS), backgroundMs: 0 }).catch(() => undefined);
  }
  throw outage;
}
