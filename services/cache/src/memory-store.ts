import { LRUCache } from 'lru-cache';
import { AppError } from '@sp/core';
import { addToCounter, formatCounter, notACounter, parseCounter } from './counter.js';
import { decodeEntry, encodeEntry, expiryOfCompact, fromCompactString, HEADER_BYTES, toCompactString } from './entry-codec.js';
import { createExpiryIndex } from './expiry-index.js';
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
  /**
   * How often expired entries are looked for (default 100 ms); 0: never by a timer, only by
   * `expireDue` (tests that step the clock call it themselves).
   */
  expiryIntervalMs?: number;
}

/** The memory backend's store: a CacheStore that also expires entries actively. */
export interface MemoryStore extends CacheStore {
  /**
   * Expires the entries whose expiry passed (at most two 100 ms slots ago), announcing each as
   * EXPIRED, within a bounded amount of work: at most EXPIRY_KEYS_PER_RUN keys and EXPIRY_RUN_MS
   * of time; what is left waits for the next run. Returns how many it expired.
   */
  expireDue(): number;
}

/** Bounds of one expiry run, so a million keys expiring at once never hold the event loop long. */
const EXPIRY_KEYS_PER_RUN = 20_000;
const EXPIRY_RUN_MS = 10;
/** Keys looked at between two readings of the time within a run. */
const EXPIRY_BATCH = 256;

/**
 * In-process LRU cache. Capacity counts entries; inserting beyond it evicts the least recently
 * used. Expiry is kept per entry as a Unix timestamp and enforced when the entry is read, so an
 * expired entry is never returned; and actively, as Redis' active expiry cycle does: every 100 ms
 * a bounded run expires the entries whose expiry passed (found through an index of the keys by
 * expiry, never by scanning the store), so Subscribe announces EXPIRED within about 200 ms of the
 * expiry whether or not anyone reads the key.
 * Entries are held as compact strings (see entry-codec) to keep a million of them small.
 * Increment, setIfAbsent and removeIfEquals read and write within one synchronous step, so they
 * are atomic.
 * With the `reject` policy a full store refuses new keys (RESOURCE_EXHAUSTED) instead of evicting,
 * after an expiry run (bounded like the timer's, so a flood of refused writes costs little).
 */
export function createMemoryStore(options: MemoryStoreOptions): MemoryStore {
  const now = options.now ?? Date.now;
  const changed = options.onChange ?? (() => undefined);
  const expiries = createExpiryIndex();
  const lru = new LRUCache<string, string>({
    max: options.capacity,
    // Every way an entry leaves (overwritten, removed, expired, evicted) takes it out of the index.
    dispose: (value, key, reason) => {
      const expiresAt = expiryOfCompact(value);
      if (expiresAt !== 0) expiries.delete(key, expiresAt);
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
    if (expiresAtUnixMs !== 0) expiries.add(key, expiresAtUnixMs, now());
    changed(key, 'WRITTEN');
  }

  function drop(key: string): void {
    lru.delete(key);
    changed(key, 'REMOVED');
  }

  /** The index's view of the store: peeks (no change of recency) and expires what is due. */
  const indexed = {
    expiryOf: (key: string): number => {
      const compact = lru.peek(key);
      return compact === undefined ? 0 : expiryOfCompact(compact);
    },
    expire: (key: string): void => {
      const compact = lru.peek(key);
      if (compact === undefined) return;
      const expiresAt = expiryOfCompact(compact);
      if (expiresAt === 0 || expiresAt > now()) return;
      lru.delete(key);
      expiredCount += 1;
      changed(key, 'EXPIRED');
    },
  };
  let expiredCount = 0;

  function expireDue(): number {
    const started = performance.now();
    expiredCount = 0;
    for (let looked = 0; looked < EXPIRY_KEYS_PER_RUN; looked += EXPIRY_BATCH) {
      if (expiries.takeDue(now(), EXPIRY_BATCH, indexed) < EXPIRY_BATCH || performance.now() - started >= EXPIRY_RUN_MS) break;
    }
    if (expiredCount > 0) options.events?.expired?.(expiredCount);
    return expiredCount;
  }

  const expiryIntervalMs = options.expiryIntervalMs ?? 100;
  const expiryTimer = expiryIntervalMs > 0 ? setInterval(expireDue, expiryIntervalMs) : undefined;
  expiryTimer?.unref();

  const rejecting = options.policy === 'reject';

  /** Throws RESOURCE_EXHAUSTED when a rejecting store is full and `key` would be a new entry. */
  function ensureRoom(key: string): void {
    if (!rejecting || lru.size < options.capacity || lru.has(key)) return;
    expireDue();
    if (lru.size < options.capacity) return;
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
    expireDue,
    size: () => lru.size,
    check: () => Promise.resolve(),
    close() {
      clearInterval(expiryTimer);
      lru.clear();
      expiries.clear();
      return Promise.resolve();
    },
  };
}
