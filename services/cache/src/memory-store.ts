import { LRUCache } from 'lru-cache';
import { AppError } from '@sp/platform';
import { addToCounter, formatCounter, notACounter, parseCounter } from './counter.js';
import { decodeEntry, encodeEntry, expiryOfCompact, fromCompactString, HEADER_BYTES, toCompactString } from './entry-codec.js';
import type { ChangeKind } from './invalidation-hub.js';
import type { CacheStore, Counter, Entry, StoreEvents } from './store.js';

/** What a full store does with a new key: evict the least recently used entry, or refuse the key. */
export type FullPolicy = 'lru' | 'reject';

export interface MemoryStoreOptions {
  capacity: number;
  /** Default `lru`. `reject`: entries are never evicted; a new key finds room only as others expire. */
  policy?: FullPolicy;
  /** Named in the refusal of a full `reject` store (e.g. its key prefix). */
  name?: string;
  events?: StoreEvents;
  /** Told of every change of a key (Subscribe's announcements), synchronously, after it took effect. */
  onChange?: (key: string, kind: ChangeKind) => void;
  /** The clock, in Unix ms; injectable so tests can step time. */
  now?: () => number;
}

/**
 * In-process LRU cache. Capacity counts entries; inserting beyond it evicts the least recently
 * used. Expiry is kept per entry as a Unix timestamp and enforced when the entry is read, so an
 * expired entry is never returned; until then it occupies a slot and ages out like any other.
 * Entries are held as compact strings (see entry-codec) to keep a million of them small.
 * Increment, setIfAbsent and removeIfEquals read and write within one synchronous step, so they
 * are atomic.
 * With the `reject` policy a full store refuses new keys (RESOURCE_EXHAUSTED) instead of evicting,
 * after dropping the entries that expired (at most once a second, so a flood of refused writes
 * does not rescan the store each time).
 */
export function createMemoryStore(options: MemoryStoreOptions): CacheStore {
  const now = options.now ?? Date.now;
  const changed = options.onChange ?? (() => undefined);
  const lru = new LRUCache<string, string>({
    max: options.capacity,
    dispose: (_value, key, reason) => {
      if (reason !== 'evict') return;
      options.events?.evicted?.(1);
      changed(key, 'EVICTED');
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
    changed(key, 'EXPIRED');
    return undefined;
  }

  function store(key: string, value: Buffer, expiresAtUnixMs: number): void {
    lru.set(key, toCompactString(encodeEntry(value, expiresAtUnixMs)));
    changed(key, 'WRITTEN');
  }

  function drop(key: string): void {
    lru.delete(key);
    changed(key, 'REMOVED');
  }

  const rejecting = options.policy === 'reject';
  let lastPurgeMs = -Infinity;

  /** Drops every expired entry, least recently used first. */
  function purgeExpired(): void {
    const at = now();
    const expired = [...lru.rentries()].filter(([, compact]) => {
      const expiresAt = compact === undefined ? 0 : expiryOfCompact(compact);
      return expiresAt !== 0 && expiresAt <= at;
    });
    for (const [key] of expired) {
      if (key === undefined) continue;
      lru.delete(key);
      changed(key, 'EXPIRED');
    }
    if (expired.length > 0) options.events?.expired?.(expired.length);
  }

  /** Throws RESOURCE_EXHAUSTED when a rejecting store is full and `key` would be a new entry. */
  function ensureRoom(key: string): void {
    if (!rejecting || lru.size < options.capacity || lru.has(key)) return;
    if (now() - lastPurgeMs >= 1000) {
      lastPurgeMs = now();
      purgeExpired();
      if (lru.size < options.capacity) return;
    }
    options.events?.rejected?.(1);
    throw new AppError(429, 'resource_exhausted', `the cache holds its most entries (${options.capacity}) for ${options.name ?? 'these keys'}; new ones fit as others expire`);
  }

  const expiryFor = (ttlMs: number): number => (ttlMs > 0 ? now() + ttlMs : 0);

  function incrementNow(key: string, delta: number, ttlMs: number): Counter {
    const compact = live(key);
    let counter: Counter;
    if (compact === undefined) {
      ensureRoom(key);
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
      if (compact === undefined) return Promise.resolve(undefined);
      // The value's bytes alone (one small pooled Buffer), the expiry read from the string: no
      // Buffer of the whole entry, no view on it and no BigInt per read.
      return Promise.resolve({ value: Buffer.from(compact.substring(HEADER_BYTES), 'latin1'), expiresAtUnixMs: expiryOfCompact(compact) });
    },
    set(key, value, ttlMs) {
      const setNow = (): Entry => {
        const expiresAtUnixMs = expiryFor(ttlMs);
        store(key, value, expiresAtUnixMs);
        return { value, expiresAtUnixMs };
      };
      // Only a rejecting store can refuse; the executor turns its throw into a rejection.
      if (rejecting) {
        return new Promise((resolve) => {
          ensureRoom(key);
          resolve(setNow());
        });
      }
      return Promise.resolve(setNow());
    },
    // A refusal is thrown synchronously; the promise executor turns it into a rejection.
    increment: (key, delta, ttlMs) => new Promise((resolve) => resolve(incrementNow(key, delta, ttlMs))),
    setIfAbsent: (key, value, ttlMs) =>
      new Promise((resolve) => {
        const compact = live(key);
        if (compact !== undefined) return resolve({ stored: false, entry: decodeEntry(fromCompactString(compact)) });
        ensureRoom(key);
        const expiresAtUnixMs = expiryFor(ttlMs);
        store(key, value, expiresAtUnixMs);
        resolve({ stored: true, entry: { value, expiresAtUnixMs } });
      }),
    remove(key) {
      const existed = live(key) !== undefined;
      if (existed) drop(key);
      return Promise.resolve(existed);
    },
    removeIfEquals(key, value) {
      const compact = live(key);
      const equal = compact !== undefined && decodeEntry(fromCompactString(compact)).value.equals(value);
      if (equal) drop(key);
      return Promise.resolve(equal);
    },
    size: () => lru.size,
    check: () => Promise.resolve(),
    close() {
      lru.clear();
      return Promise.resolve();
    },
  };
}
