import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { createMemoryStore } from '../src/memory-store.js';

type Step =
  | { op: 'get'; key: string }
  | { op: 'set'; key: string; value: number; ttlMs: number }
  | { op: 'remove'; key: string }
  | { op: 'tick'; ms: number };

/**
 * The reference: an array ordered from least to most recently used, with expiry checked on
 * access. Expired entries keep their slot until touched, as the specification of the memory
 * backend says; capacity evicts the front.
 */
class Model {
  private entries: Array<{ key: string; value: number; expiresAt: number }> = [];
  now = 1_700_000_000_000;

  constructor(private readonly capacity: number) {}

  private take(key: string): { key: string; value: number; expiresAt: number } | undefined {
    const index = this.entries.findIndex((entry) => entry.key === key);
    return index < 0 ? undefined : this.entries.splice(index, 1)[0];
  }

  private live(key: string): { key: string; value: number; expiresAt: number } | undefined {
    const entry = this.take(key);
    if (entry === undefined || (entry.expiresAt !== 0 && entry.expiresAt <= this.now)) return undefined;
    this.entries.push(entry);
    return entry;
  }

  get(key: string): number | undefined {
    return this.live(key)?.value;
  }

  set(key: string, value: number, ttlMs: number): void {
    this.take(key);
    if (this.entries.length >= this.capacity) this.entries.shift();
    this.entries.push({ key, value, expiresAt: ttlMs > 0 ? this.now + ttlMs : 0 });
  }

  remove(key: string): boolean {
    const existed = this.live(key) !== undefined;
    this.take(key);
    return existed;
  }

  size(): number {
    return this.entries.length;
  }
}

const key = fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g');
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ op: fc.constant('get' as const), key }),
  fc.record({ op: fc.constant('set' as const), key, value: fc.integer(), ttlMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 100 })) }),
  fc.record({ op: fc.constant('remove' as const), key }),
  fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 60 }) }),
);

describe('memory store against a reference model', () => {
  it('should never hold more than its capacity and always agree with the model', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 5 }), fc.array(step, { maxLength: 200 }), async (capacity, steps) => {
        const model = new Model(capacity);
        const store = createMemoryStore({ capacity, now: () => model.now });
        for (const s of steps) {
          switch (s.op) {
            case 'get': {
              const entry = await store.get(s.key);
              expect(entry === undefined ? undefined : entry.value.readInt32BE(0)).toBe(model.get(s.key));
              break;
            }
            case 'set': {
              const value = Buffer.alloc(4);
              value.writeInt32BE(s.value, 0);
              await store.set(s.key, value, s.ttlMs);
              model.set(s.key, s.value, s.ttlMs);
              break;
            }
            case 'remove':
              expect(await store.remove(s.key)).toBe(model.remove(s.key));
              break;
            case 'tick':
              model.now += s.ms;
              break;
          }
          expect(store.size()).toBeLessThanOrEqual(capacity);
          expect(store.size()).toBe(model.size());
        }
      }),
      { numRuns: 300 },
    );
  });
});
