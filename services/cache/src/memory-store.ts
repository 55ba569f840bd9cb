import { LRUCache } from 'lru-cache';
import { addToCounter, formatCounter, notACounter, parseCounter } from './counter.js';
import { decodeEntry, encodeEntry, expiryOfCompact, fromCompactString, HEADER_BYTES, toCompactString } from './entry-codec.js';
import type { CacheStore, Counter, StoreEvents } from './store.js';

export interface MemoryStoreOptions {
  capacity: number;
  events?: StoreEvents;
  /** The clock, in Unix ms; injectable so tests can step time. */
  now?: () => number;
}

/**
 * In-process LRU cache. Capacity counts entries; inserting beyond it evicts the least recently
 * used. Expiry is kept per entry as a Unix timestamp and enforced when the entry is read, so an
 * expired entry is never returned; until then it occupies a slot and ages out like any other.
 * Entries are held as compact strings (see entry-codec) to keep a million of them small.
 * Increment and setIfAbsent read and write within one synchronous step, so they are atomic.
 */
export function createMemoryStore(options: MemoryStoreOptions): CacheStore {
  const now = options.now ?? Date.now;
  const lru = new LRUCache<string, string>({
    max: options.capacity,
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') options.events?.evicted?.(1);
    },
  });

  /** The live entry's compact form; an expired one is dropped on the way. */
  function live(key: string): string | undefined {
    const compact = lru.get(key);
    if (compact === undefined) return undefined;
    const expiresAt = expiryOfCompact(compact);
    if (expiresAt === 0 || expiresAt > now()) return compact;
    lru.delete(key);
    options.events?.expired?.(1);
    return undefined;
  }

  function store(key: string, value: Buffer, expiresAtUnixMs: number): void {
    lru.set(key, toCompactString(encodeEntry(value, expiresAtUnixMs)));
  }

  const expiryFor = (ttlMs: number): number => (ttlMs > 0 ? now() + ttlMs : 0);

  function incrementNow(key: string, delta: number, ttlMs: number): Counter {
    const compact = live(key);
    let counter: Counter;
    if (compact === undefined) {
      counter = { value: addToCounter(0, delta), expiresAtUnixMs: expiryFor(ttlMs) };
    } else {
      const current = parseCounter(compact.slice(HEADER_BYTES));
      if (current === undefined) throw notACounter();
      counter = { value: addToCounter(current, delta), expiresAtUnixMs: expiryOfCompact(compact) };
    }
    store(key, formatCounter(counter.value), counter.expiresAtUnixMs);
    return counter;
  }

  return {
    get(key) {
      const compact = live(key);
      return Promise.resolve(compact === undefined ? undefined : decodeEntry(fromCompactString(compact)));
    },
    set(key, value, ttlMs) {
      const expiresAtUnixMs = expiryFor(ttlMs);
      store(key, value, expiresAtUnixMs);
      return Promise.resolve({ value, expiresAtUnixMs });
    },
    // A refusal is thrown synchronously; the promise executor turns it into a rejection.
    increment: (key, delta, ttlMs) => new Promise((resolve) => resolve(incrementNow(key, delta, ttlMs))),
    setIfAbsent(key, value, ttlMs) {
      const compact = live(key);
      if (compact !== undefined) return Promise.resolve({ stored: false, entry: decodeEntry(fromCompactString(compact)) });
      const expiresAtUnixMs = expiryFor(ttlMs);
      store(key, value, expiresAtUnixMs);
      return Promise.resolve({ stored: true, entry: { value, expiresAtUnixMs } });
    },
    remove(key) {
      const existed = live(key) !== undefined;
      if (existed) lru.delete(key);
      return Promise.resolve(existed);
    },
    size: () => lru.size,
    check: () => Promise.resolve(),
    close() {
      lru.clear();
      return Promise.resolve();
    },
  };
}
