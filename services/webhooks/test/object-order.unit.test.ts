import { describe, expect, it } from '@jest/globals';
import { silentLogger } from '../../../test/support/silent-logger.js';
import type { ValidEvent } from '../src/payments/event-schemas.js';
import { createMemoryProcessingStore } from '../src/events/memory-processing-store.js';
import { orderOf } from '../src/payments/object-order.js';
import type { PaymentActionDeps } from '../src/payments/payment-action.js';
import { versionedDelete, versionedUpsert, type VersionedObject } from '../src/payments/versioned-object-actions.js';

describe('orderOf', () => {
  it('should tell an event about an object never seen as unknown', () => {
    expect(orderOf(null, 100)).toBe('unknown');
  });

  it('should order by the event time against the applied version, to the second', () => {
    const applied = { created: 100, deleted: false };
    expect(orderOf(applied, 101)).toBe('newer');
    expect(orderOf(applied, 100)).toBe('tie');
    expect(orderOf(applied, 99)).toBe('stale');
  });

  it('should call every event about a deleted object stale, however late', () => {
    expect(orderOf({ created: 100, deleted: true }, 10_000)).toBe('stale');
  });
});

interface Plan {
  id: string;
  name: string;
}

/**
 * A provider object kept as a record, with the provider's current state and the record both in
 * maps the test reads: the versioned actions decide which of the event's object and the current
 * one lands, and whether the version the record holds lets a write in.
 */
function plans() {
  const provider = new Map<string, Plan>();
  const records = new Map<string, Plan & { version: number }>();
  const kind: VersionedObject<Plan, Plan & { version: number }> = {
    key: (id) => `plan:${id}`,
    record: (id) => Promise.resolve(records.get(id) ?? null),
    current: (id) => Promise.resolve(provider.get(id) ?? null),
    apply(object, record, write) {
      // The gateway's conditional write: a record of a newer version stays.
      if (record !== null && record.version > write.version) return Promise.resolve(false);
      records.set(object.id, { ...object, version: write.version });
      return Promise.resolve(true);
    },
    remove: (record) => Promise.resolve(records.delete(record.id)),
  };
  const deps = { processing: createMemoryProcessingStore(), logger: silentLogger('webhooks') } as Partial<PaymentActionDeps> as PaymentActionDeps;
  const upsert = versionedUpsert(kind);
  const remove = versionedDelete(kind);
  let n = 0;
  const event = <T>(created: number, object: T): ValidEvent<T> => ({ id: `evt_${++n}`, type: 'plan.updated', created, object });
  return {
    provider,
    records,
    upsert: (created: number, plan: Plan) => upsert(event(created, plan), deps),
    remove: (created: number, id: string) => remove(event(created, { id }), deps),
  };
}

describe('versioned upserts', () => {
  it('should apply a newer event and ignore an older one that arrives after it', async () => {
    const { records, upsert, provider } = plans();
    provider.set('p1', { id: 'p1', name: 'current' });
    expect(await upsert(100, { id: 'p1', name: 'first' })).toBe('processed');
    expect(await upsert(200, { id: 'p1', name: 'second' })).toBe('processed');
    expect(await upsert(150, { id: 'p1', name: 'late' })).toBe('stale');
    expect(records.get('p1')).toEqual({ id: 'p1', name: 'second', version: 200 });
  });

  it('should apply the provider\'s current object on a tie, as which event is newer cannot be told', async () => {
    const { records, upsert, provider } = plans();
    expect(await upsert(100, { id: 'p1', name: 'first' })).toBe('processed');
    provider.set('p1', { id: 'p1', name: 'current' });
    expect(await upsert(100, { id: 'p1', name: 'same second' })).toBe('processed');
    expect(records.get('p1')?.name).toBe('current');
  });

  it('should read the current object when a record exists but no version is remembered', async () => {
    const { records, upsert, provider } = plans();
    records.set('p1', { id: 'p1', name: 'from before the retention', version: 50 });
    provider.set('p1', { id: 'p1', name: 'current' });
    expect(await upsert(100, { id: 'p1', name: 'event' })).toBe('processed');
    expect(records.get('p1')?.name).toBe('current');
  });

  it('should delete the record when the current object is gone at the provider, and refuse later events', async () => {
    const { records, upsert } = plans();
    expect(await upsert(100, { id: 'p1', name: 'first' })).toBe('processed');
    expect(await upsert(100, { id: 'p1', name: 'tie, deleted meanwhile' })).toBe('processed');
    expect(records.has('p1')).toBe(false);
    expect(await upsert(500, { id: 'p1', name: 'after the deletion' })).toBe('stale');
    expect(records.has('p1')).toBe(false);
  });

  it('should answer stale when the gateway holds a newer version, and record nothing', async () => {
    const { records, upsert } = plans();
    expect(await upsert(100, { id: 'p1', name: 'first' })).toBe('processed');
    // A write of the event at 300, given up on after its deadline, reached the gateway after all.
    records.set('p1', { id: 'p1', name: 'newer write landed first', version: 300 });
    expect(await upsert(200, { id: 'p1', name: 'older' })).toBe('stale');
    expect(records.get('p1')?.name).toBe('newer write landed first');
  });
});

describe('versioned deletes', () => {
  it('should remove the record and make every later create or update stale, whatever its time', async () => {
    const { records, upsert, remove } = plans();
    expect(await upsert(100, { id: 'p1', name: 'first' })).toBe('processed');
    expect(await remove(90, 'p1')).toBe('processed');
    expect(records.has('p1')).toBe(false);
    expect(await upsert(1000, { id: 'p1', name: 'revived' })).toBe('stale');
    expect(records.has('p1')).toBe(false);
  });

  it('should accept the deletion of an object it never had', async () => {
    const { remove } = plans();
    expect(await remove(100, 'p9')).toBe('processed');
  });
});
