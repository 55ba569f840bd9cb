import { LRUCache } from 'lru-cache';
import type { CacheStore, Entry, StoreEvents } from './store.js';

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
 */
export function createMemoryStore(options: MemoryStoreOptions): CacheStore {
  const now = options.now ?? Date.now;
  const lru = new LRUCache<string, Entry>({
    max: options.capacity,
    dispose: (_value, _key, reason) => {
      if (reason === 'evict') options.events?.evicted?.(1);
    },
  });

  const isExpired = (entry: Entry): boolean => entry.expiresAtUnixMs !== 0 && entry.expiresAtUnixMs <= now();

  function live(key: string): Entry | undefined {
    const entry = lru.get(key);
    if (entry === undefined || !isExpired(entry)) return entry;
    lru.delete(key);
    options.events?.expired?.(1);
    return undefined;
  }

  return {
    get: (key) => Promise.resolve(live(key)),
    set(key, value, ttlMs) {
      const entry = { value, expiresAtUnixMs: ttlMs > 0 ? now() + ttlMs : 0 };
      lru.set(key, entry);
      return Promise.resolve(entry);
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
