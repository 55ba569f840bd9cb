import type { DeletedObject, ValidEvent } from './event-schemas.js';
import { orderOf, recordApplied, recordDeleted, withObjectVersion } from './object-order.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-action.js';

/** One conditional write: the event it is made for, and the version of the state it carries. */
export interface VersionedWrite {
  event: ValidEvent<unknown>;
  /** Unix seconds; the gateway applies the write only when not older than what the record holds. */
  version: number;
}

/**
 * A provider object the gateway keeps a record of (a product's plan, a price's tier): how to find,
 * fetch, apply and delete it. The versioned actions below order its events the same way for each.
 */
export interface VersionedObject<O extends { id: string }, R> {
  /** The key its applied version is kept under. */
  key(id: string): string;
  /** The gateway's record of it, or null. */
  record(id: string, deps: PaymentActionDeps): Promise<R | null>;
  /** The object as the provider has it now; null once deleted there. */
  current(id: string, deps: PaymentActionDeps): Promise<O | null>;
  /**
   * Makes the record what `object` says (creating it when `record` is null), conditionally on
   * `write.version`: false when the gateway holds a newer version (a write of a newer event
   * landed first) and left the record as it was.
   */
  apply(object: O, record: R | null, write: VersionedWrite, deps: PaymentActionDeps): Promise<boolean>;
  /** Deletes the record; already gone is fine. */
  remove(record: R, deps: PaymentActionDeps): Promise<unknown>;
  /** True when every event of the object is stale whatever its time (e.g. its parent was deleted). */
  orphaned?(object: O, deps: PaymentActionDeps): Promise<boolean>;
  /** The version the provider's current object stands for; the event's time unless it says more. */
  currentVersion?(event: ValidEvent<O>, current: O): number;
}

/** Applies `write.object` as of `write.version` and records the version; false (nothing recorded) when the gateway holds a newer one. */
async function applyVersion<O extends { id: string }, R>(kind: VersionedObject<O, R>, record: R | null, write: VersionedWrite & { object: O }, deps: PaymentActionDeps): Promise<boolean> {
  if (!(await kind.apply(write.object, record, write, deps))) return false;
  await recordApplied(deps, kind.key(write.object.id), write.version);
  return true;
}

/** The object as the provider has it now, applied; one deleted meanwhile is deleted here too. */
async function applyCurrent<O extends { id: string }, R>(kind: VersionedObject<O, R>, event: ValidEvent<O>, record: R | null, deps: PaymentActionDeps): Promise<boolean> {
  const current = await kind.current(event.object.id, deps);
  if (current === null) {
    if (record !== null) await kind.remove(record, deps);
    await recordDeleted(deps, kind.key(event.object.id), null, event.created);
    return true;
  }
  return applyVersion(kind, record, { object: current, event, version: kind.currentVersion?.(event, current) ?? event.created }, deps);
}

/**
 * `.created` and `.updated`: the event's object is applied when the event is newer than what was
 * applied (see orderOf); on a tie, or with nothing recorded for an object the gateway already has,
 * the provider's current object is applied instead; a stale event, or one about a deleted (or
 * orphaned) object, is answered `stale` and changes nothing. So is an event whose conditional
 * write the gateway refused: a newer state reached it first (e.g. while an older write, given up
 * on after its deadline, was still on its way), and the newer state stays.
 */
export function versionedUpsert<O extends { id: string }, R>(kind: VersionedObject<O, R>): PaymentEventAction<O> {
  return (event, deps) =>
    withObjectVersion(deps, kind.key(event.object.id), async (version): Promise<ActionResult> => {
      const orphaned = (await kind.orphaned?.(event.object, deps)) ?? false;
      const order = orphaned ? 'stale' : orderOf(version, event.created);
      if (order === 'stale') return 'stale';
      const record = await kind.record(event.object.id, deps);
      const applied =
        order === 'newer' || (order === 'unknown' && record === null)
          ? await applyVersion(kind, record, { object: event.object, event, version: event.created }, deps)
          : await applyCurrent(kind, event, record, deps);
      return applied ? 'processed' : 'stale';
    });
}

/** `.deleted`: delete the record (already gone is fine) and leave a tombstone. */
export function versionedDelete<O extends { id: string }, R>(kind: VersionedObject<O, R>): PaymentEventAction<DeletedObject> {
  return (event, deps) =>
    withObjectVersion(deps, kind.key(event.object.id), async (version): Promise<ActionResult> => {
      const record = await kind.record(event.object.id, deps);
      if (record !== null) await kind.remove(record, deps);
      await recordDeleted(deps, kind.key(event.object.id), version, event.created);
      return 'processed';
    });
}
