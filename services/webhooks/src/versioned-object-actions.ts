import type { DeletedObject, ValidEvent } from './event-schemas.js';
import { orderOf, recordApplied, recordDeleted, withObjectVersion } from './object-order.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-event-actions.js';

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
  /** Makes the record what `object` says (creating it when `record` is null). */
  apply(object: O, record: R | null, event: ValidEvent<O>, deps: PaymentActionDeps): Promise<void>;
  /** Deletes the record; already gone is fine. */
  remove(record: R, deps: PaymentActionDeps): Promise<unknown>;
  /** True when every event of the object is stale whatever its time (e.g. its parent was deleted). */
  orphaned?(object: O, deps: PaymentActionDeps): Promise<boolean>;
  /** The version the provider's current object stands for; the event's time unless it says more. */
  currentVersion?(event: ValidEvent<O>, current: O): number;
}

/** The object as the provider has it now, applied; one deleted meanwhile is deleted here too. */
async function applyCurrent<O extends { id: string }, R>(kind: VersionedObject<O, R>, event: ValidEvent<O>, record: R | null, deps: PaymentActionDeps): Promise<void> {
  const key = kind.key(event.object.id);
  const current = await kind.current(event.object.id, deps);
  if (current === null) {
    if (record !== null) await kind.remove(record, deps);
    await recordDeleted(deps, key, null, event.created);
    return;
  }
  await kind.apply(current, record, event, deps);
  await recordApplied(deps, key, kind.currentVersion?.(event, current) ?? event.created);
}

/**
 * `.created` and `.updated`: the event's object is applied when the event is newer than what was
 * applied (see orderOf); on a tie, or with nothing recorded for an object the gateway already has,
 * the provider's current object is applied instead; a stale event, or one about a deleted (or
 * orphaned) object, is answered `stale` and changes nothing.
 */
export function versionedUpsert<O extends { id: string }, R>(kind: VersionedObject<O, R>): PaymentEventAction<O> {
  return (event, deps) =>
    withObjectVersion(deps, kind.key(event.object.id), async (version): Promise<ActionResult> => {
      const orphaned = (await kind.orphaned?.(event.object, deps)) ?? false;
      const order = orphaned ? 'stale' : orderOf(version, event.created);
      if (order === 'stale') return 'stale';
      const record = await kind.record(event.object.id, deps);
      if (order === 'newer' || (order === 'unknown' && record === null)) {
        await kind.apply(event.object, record, event, deps);
        await recordApplied(deps, kind.key(event.object.id), event.created);
      } else {
        await applyCurrent(kind, event, record, deps);
      }
      return 'processed';
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
