import { setTimeout as sleep } from 'node:timers/promises';
import type { ProcessingStore } from './processing-store.js';
import { despiteFailover } from './despite-failover.js';
import { eventInProgress } from './errors.js';

export interface ProcessOnceOptions {
  /** How long a claim lives: longer than any processing can take (every call in it has a timeout). */
  leaseMs: number;
  /** How long a processed event is remembered; longer than the provider retries (Stripe: 3 days). */
  retentionMs: number;
  /** How long a concurrent delivery of the same event waits for the first one before answering 409. */
  waitMs: number;
  pollMs: number;
}

export const defaultProcessOnceOptions: ProcessOnceOptions = {
  leaseMs: 120_000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  waitMs: 8_000,
  pollMs: 50,
};

/**
 * Runs `work` for an event at most once to completion across all replicas and redeliveries.
 *
 * - Already processed: resolves `{ duplicate: true }` without running `work`.
 * - Claimed by us: runs `work`; success marks the event processed (only then), failure drops the
 *   claim and rethrows, so the provider's retry processes it again (the work is idempotent).
 * - Claimed by a concurrent delivery: waits for it. When it succeeds this delivery is a duplicate;
 *   when it fails this one takes over; when it is still busy after `waitMs`, 409 with Retry-After.
 *
 * So a 2xx is only ever answered for an event whose processing finished.
 */
export async function processOnce<T>(
  store: ProcessingStore,
  eventId: string,
  work: () => Promise<T>,
  options: ProcessOnceOptions = defaultProcessOnceOptions,
): Promise<{ duplicate: true } | { duplicate: false; value: T }> {
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    const claim = await store.claim(eventId, options.leaseMs);
    if (claim.state === 'done') return { duplicate: true };
    if (claim.state === 'claimed') return { duplicate: false, value: await runClaimed({ store, eventId, token: claim.token }, work, options) };
    if (Date.now() >= deadline) throw eventInProgress(Math.ceil(options.waitMs / 1000));
    await sleep(options.pollMs);
  }
}

interface Claim {
  store: ProcessingStore;
  eventId: string;
  token: string;
}

async function runClaimed<T>({ store, eventId, token }: Claim, work: () => Promise<T>, options: ProcessOnceOptions): Promise<T> {
  let value: T;
  try {
    value = await work();
  } catch (err) {
    await despiteFailover(() => store.release(eventId, token), options.waitMs, options.pollMs).catch(() => undefined); // the lease expires by itself otherwise
    throw err;
  }
  await despiteFailover(() => store.complete(eventId, token, options.retentionMs), options.waitMs, options.pollMs);
  return value;
}

/**
 * Runs `work` while holding the claim `key` (e.g. `lock:product:prod_1`), so changes of one
 * provider object are applied one at a time across all replicas. A concurrent holder is waited
 * for up to `waitMs`, then 409 with Retry-After. The claim is dropped afterwards, never completed:
 * the key guards the object, not one event.
 */
export async function withClaim<T>(store: ProcessingStore, key: string, work: () => Promise<T>, options: ProcessOnceOptions = defaultProcessOnceOptions): Promise<T> {
  const deadline = Date.now() + options.waitMs;
  for (;;) {
    const claim = await store.claim(key, options.leaseMs);
    if (claim.state === 'claimed') {
      try {
        return await work();
      } finally {
        await despiteFailover(() => store.release(key, claim.token), options.waitMs, options.pollMs).catch(() => undefined); // the lease expires by itself otherwise
      }
    }
    if (Date.now() >= deadline) throw eventInProgress(Math.ceil(options.waitMs / 1000));
    await sleep(options.pollMs);
  }
}
