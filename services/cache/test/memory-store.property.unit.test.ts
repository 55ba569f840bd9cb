import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createMemoryStore } from '../src/memory-store.js';

type Step =
  | { op: 'get'; key: string }
  | { op: 'set'; key: string; value: string; ttlMs: number }
  | { op: 'remove'; key: string }
  | { op: 'removeIfEquals'; key: string; value: string }
  | { op: 'increment'; key: string; delta: number; ttlMs: number }
  | { op: 'setIfAbsent'; key: string; value: string; ttlMs: number }
  | { op: 'tick'; ms: number };

interface ModelEntry {
  key: string;
  value: string;
  expiresAt: number;
}

type IncrementOutcome = { value: number; expiresAt: number } | 'refused';

/**
 * The reference: an array ordered from least to most recently used, with expiry checked on
 * access and, as time passes, actively for the entries whose 100 ms expiry slot has ended (the
 * store's expiry run, here run at every tick); capacity evicts the front. A counter is a value of
 * at most 16 decimal digits.
 */
class Model {
  private entries: ModelEntry[] = [];
  now = 1_700_000_000_000;

  constructor(private readonly capacity: number) {}

  private take(key: string): ModelEntry | undefined {
    const index = this.entries.findIndex((entry) => entry.key === key);
    return index < 0 ? undefined : this.entries.splice(index, 1)[0];
  }

  private live(key: string): ModelEntry | undefined {
    const entry = this.take(key);
    if (entry === undefined || (entry.expiresAt !== 0 && entry.expiresAt <= this.now)) return undefined;
    this.entries.push(entry);
    return entry;
  }

  private insert(key: string, value: string, expiresAt: number): void {
    this.take(key);
    if (this.entries.length >= this.capacity) this.entries.shift();
    this.entries.push({ key, value, expiresAt });
  }

  private expiry(ttlMs: number): number {
    return ttlMs > 0 ? this.now + ttlMs : 0;
  }

  get(key: string): string | undefined {
    return this.live(key)?.value;
  }

  set(key: string, value: string, ttlMs: number): void {
    this.insert(key, value, this.expiry(ttlMs));
  }

  remove(key: string): boolean {
    const existed = this.live(key) !== undefined;
    this.take(key);
    return existed;
  }

  removeIfEquals(key: string, value: string): boolean {
    const equal = this.live(key)?.value === value;
    if (equal) this.take(key);
    return equal;
  }

  increment(key: string, delta: number, ttlMs: number): IncrementOutcome {
    const entry = this.live(key);
    if (entry !== undefined && !/^-?\d{1,16}$/.test(entry.value)) return 'refused';
    const value = (entry === undefined ? 0 : Number(entry.value)) + delta;
    if (Math.abs(value) > Number.MAX_SAFE_INTEGER || (entry !== undefined && Math.abs(Number(entry.value)) > Number.MAX_SAFE_INTEGER)) return 'refused';
    const expiresAt = entry?.expiresAt ?? this.expiry(ttlMs);
    this.insert(key, String(value), expiresAt);
    return { value, expiresAt };
  }

  setIfAbsent(key: string, value: string, ttlMs: number): { stored: boolean; value: string } {
    const entry = this.live(key);
    if (entry !== undefined) return { stored: false, value: entry.value };
    this.insert(key, value, this.expiry(ttlMs));
    return { stored: true, value };
  }

  size(): number {
    return this.entries.length;
  }

  /** The active expiry: entries whose 100 ms expiry slot has ended are dropped; returns how many. */
  expireDue(): number {
    const before = this.entries.length;
    this.entries = this.entries.filter((entry) => entry.expiresAt === 0 || Math.floor(entry.expiresAt / 100) >= Math.floor(this.now / 100));
    return before - this.entries.length;
  }
}

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
const ttlMs = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 100 }));
// Counters (decimal digits, some at the edge of the safe range) and values that are not.
const value = fc.oneof(
  fc.integer().map(String),
  fc.constantFrom(String(Number.MAX_SAFE_INTEGER), '-9007199254740992', '1.5', '', 'x', '007'),
);
const delta = fc.oneof(fc.integer({ min: -5, max: 5 }), fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER));
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('get' as const), key }),
  fc.record({ op: fc.constant('set' as const), key, value, ttlMs }),
  fc.record({ op: fc.constant('remove' as const), key }),
  // Values that the steps above often store, so that some comparisons hold.
  fc.record({ op: fc.constant('removeIfEquals' as const), key, value: fc.oneof(value, fc.constantFrom('0', '1', '-1', 'x', '')) }),
  fc.record({ op: fc.constant('increment' as const), key, delta, ttlMs }),
  fc.record({ op: fc.constant('setIfAbsent' as const), key, value, ttlMs }),
  fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 60 }) }),
);

type Store = ReturnType<typeof createMemoryStore>;

/** Runs one step on store and model and compares what each answered. */
async function check(store: Store, model: Model, s: Step): Promise<void> {
  switch (s.op) {
    case 'get': {
      const entry = await store.get(s.key);
      expect(entry?.value.toString('latin1')).toBe(model.get(s.key));
      break;
    }
    case 'set':
      await store.set(s.key, Buffer.from(s.value, 'latin1'), s.ttlMs);
      model.set(s.key, s.value, s.ttlMs);
      break;
    case 'remove':
      expect(await store.remove(s.key)).toBe(model.remove(s.key));
      break;
    case 'removeIfEquals':
      expect(await store.removeIfEquals(s.key, Buffer.from(s.value, 'latin1'))).toBe(model.removeIfEquals(s.key, s.value));
      break;
    case 'increment': {
      const expected = model.increment(s.key, s.delta, s.ttlMs);
      const actual = await store.increment(s.key, s.delta, s.ttlMs).then(
        (counter) => ({ value: counter.value, expiresAt: counter.expiresAtUnixMs }),
        (err: { status?: number }) => (err.status === 412 ? ('refused' as const) : Promise.reject(err as Error)),
      );
      expect(actual).toEqual(expected);
      break;
    }
    case 'setIfAbsent': {
      const result = await store.setIfAbsent(s.key, Buffer.from(s.value, 'latin1'), s.ttlMs);
      expect({ stored: result.stored, value: result.entry.value.toString('latin1') }).toEqual(model.setIfAbsent(s.key, s.value, s.ttlMs));
      break;
    }
    case 'tick':
      model.now += s.ms;
      expect(store.expireDue()).toBe(model.expireDue());
      break;
  }
}

describe('memory store against a reference model', () => {
  it('should never hold more than its capacity and always agree with the model, atomic operations included', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 200 }), async (capacity, steps) => {
        const model = new Model(capacity);
        // No timer: the steps run the expiry themselves, on the model's clock.
        const store = createMemoryStore({ capacity, now: () => model.now, expiryIntervalMs: 0 });
        try {
          for (const s of steps) {
            await check(store, model, s);
            expect(store.size()).toBeLessThanOrEqual(capacity);
            expect(store.size()).toBe(model.size());
          }
        } finally {
          await store.close();
        }
      }),
      { numRuns: 300 },
    );
  });
});
