import { poll, type AppError } from '@sp/core';
import type { ProcessingStore } from './processing-store.js';
import { despiteFailover } from './despite-failover.js';
import { eventInProgress } from '../errors.js';

export interface ProcessOnceOptions {
  /** How long a claim lives: longer than any processing can take (every call in it has a timeout). */
  leaseMs: number;
  /** How long a processed event is remembered; longer than the provider retries (Stripe: 3 days). */
  retentionMs: number;
  /** How long a concurrent delivery of the same event waits for the first one before answering 409. */
  waitMs: number;
  pollMs: number;
  /** The clock, Unix ms, of the waits and of the lease's end (as poll's); Date.now unless given. */
  now?: () => number;
}

export const defaultProcessOnceOptions: ProcessOnceOptions = {
  leaseMs: 120_000,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  waitMs: 8_000,
  pollMs: 50,
};

/** When a claim taken now ends, by the options' clock. */
const leaseEnd = ({ leaseMs, now = Date.now }: ProcessOnceOptions): number => now() + leaseMs;

/** 409 with Retry-After: a concurrent delivery still holds the claim after `waitMs`. */
const inProgress = (options: ProcessOnceOptions): AppError => eventInProgress(Math.ceil(options.waitMs / 1000));

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
  const claim = await poll(async () => {
    const outcome = await store.claim(eventId, options.leaseMs);
    return outcome.state === 'busy' ? undefined : outcome;
  }, options);
  if (claim === undefined) throw inProgress(options);
  if (claim.state === 'done') return { duplicate: true };
  return { duplicate: false, value: await runClaimed({ store, eventId, token: claim.token, leaseEndsAt: leaseEnd(options) }, work, options) };
}

interface Claim {
  store: ProcessingStore;
  eventId: string;
  token: string;
  /** Unix ms, taken just after the claim: no later than the claim's real end by more than the claim call. */
  leaseEndsAt: number;
}

/** The holder's bookkeeping on its claim, in the foreground for `waitMs`, then in the background for the rest of the lease. */
const bookkeeping = ({ waitMs, pollMs, now = Date.now }: ProcessOnceOptions, leaseEndsAt: number) => ({ waitMs, pollMs, now, backgroundMs: leaseEndsAt - now() - waitMs });

async function runClaimed<T>({ store, eventId, token, leaseEndsAt }: Claim, work: () => Promise<T>, options: ProcessOnceOptions): Promise<T> {
  let value: T;
  try {
    value = await work();
  } catch (err) {
    await despiteFailover(() => store.release(eventId, token), bookkeeping(options, leaseEndsAt)).catch(() => undefined); // the lease expires by itself otherwise
    throw err;
  }
  await despiteFailover(() => store.complete(eventId, token, options.retentionMs), bookkeeping(options, leaseEndsAt));
  return value;
}

/**
 * Runs `work` while holding the claim `key` (e.g. `lock:product:prod_1`), so changes of one
 * provider object are applied one at a time across all replicas. A concurrent holder is waited
 * for up to `waitMs`, then 409 with Retry-After. The claim is dropped afterwards, never completed:
 * the key guards the object, not one event.
 */
export async function withClaim<T>(store: ProcessingStore, key: string, work: () => Promise<T>, options: ProcessOnceOptions = defaultProcessOnceOptions): Promise<T> {
  const claim = await poll(async () => {
    const outcome = await store.claim(key, options.leaseMs);
    return outcome.state === 'claimed' ? outcome : undefined;
  }, options);
  if (claim === undefined) throw inProgress(options);
  const leaseEndsAt = leaseEnd(options);
  try {
    return await work();
  } finally {
    await despiteFailover(() => store.release(key, claim.token), bookkeeping(options, leaseEndsAt)).catch(() => undefined); // the lease expires by itself otherwise
  }
}
