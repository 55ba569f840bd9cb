import type { ObjectVersion } from '../events/processing-store.js';
import type { PaymentActionDeps } from './payment-action.js';
import { defaultProcessOnceOptions, withClaim } from '../events/process-once.js';

/**
 * How an event about a provider object relates to what was applied to it:
 * `newer` — apply the event's object; `stale` — older than what was applied, or the object was
 * deleted: acknowledge and ignore; `tie` — same second as what was applied, or `unknown` — nothing
 * recorded (never seen, or forgotten after the retention): which is newer cannot be told from
 * the event, so the object is read from the provider, as Stripe recommends.
 */
export type EventOrder = 'newer' | 'stale' | 'tie' | 'unknown';

export function orderOf(version: ObjectVersion | null, created: number): EventOrder {
  if (version === null) return 'unknown';
  if (version.deleted || created < version.created) return 'stale';
  return created === version.created ? 'tie' : 'newer';
}

/**
 * Runs `work` with the object's applied version, while no other delivery (on any replica) works
 * on the same object, so two changes of one object are never applied in an interleaved order.
 */
export async function withObjectVersion<T>(deps: PaymentActionDeps, objectKey: string, work: (version: ObjectVersion | null) => Promise<T>): Promise<T> {
  return withClaim(deps.processing, `object:${objectKey}`, async () => work(await deps.processing.readVersion(objectKey)), deps.processOnceOptions);
}

const retentionOf = (deps: PaymentActionDeps): number => (deps.processOnceOptions ?? defaultProcessOnceOptions).retentionMs;

/** Remembers that the object's state as of `created` (Unix seconds) is applied. */
export function recordApplied(deps: PaymentActionDeps, objectKey: string, created: number): Promise<void> {
  return deps.processing.recordVersion(objectKey, { created, deleted: false }, retentionOf(deps));
}

/**
 * Leaves a tombstone: a deletion is final at the provider, so every later create or update of
 * the object, whatever its `created`, is stale. Kept as long as processed events are remembered,
 * longer than the provider retries.
 */
export function recordDeleted(deps: PaymentActionDeps, objectKey: string, version: ObjectVersion | null, created: number): Promise<void> {
  return deps.processing.recordVersion(objectKey, { created: Math.max(version?.created ?? 0, created), deleted: true }, retentionOf(deps));
}
