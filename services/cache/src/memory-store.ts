import { LRUCache } from 'lru-cache';
import { decodeEntry, encodeEntry, expiryOfCompact, fromCompactString, toCompactString } from './entry-codec.js';
import type { CacheStore, StoreEvents } from './store.js';

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

  return {
    get(key) {
      const compact = live(key);
      return Promise.resolve(compact === undefined ? undefined : decodeEntry(fromCompactString(compact)));
    },
    set(key, value, ttlMs) {
      const expiresAtUnixMs = ttlMs > 0 ? now() + ttlMs : 0;
      lru.set(key, toCompactString(encodeEntry(value, expiresAtUnixMs)));
      return Promise.resolve({ value, expiresAtUnixMs });
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
