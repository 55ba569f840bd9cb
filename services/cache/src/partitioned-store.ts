import type { CacheStore } from './store.js';

export interface Partition {
  /** Keys starting with it live in `store`; the longest matching prefix wins. */
  prefix: string;
  store: CacheStore;
}

/**
 * Routes each key to the store of its prefix, or to `rest`. Every store keeps its own capacity,
 * so entries of one prefix can only ever push out entries of the same prefix: a flood of one kind
 * of record (say login states) cannot evict another (sessions, rate limits).
 */
export function createPartitionedStore(rest: CacheStore, partitions: readonly Partition[]): CacheStore {
  const byLength = [...partitions].sort((a, b) => b.prefix.length - a.prefix.length);
  const storeOf = (key: string): CacheStore => byLength.find((partition) => key.startsWith(partition.prefix))?.store ?? rest;
  const all = [rest, ...partitions.map((partition) => partition.store)];
  return {
    get: (key) => storeOf(key).get(key),
    set: (key, value, ttlMs) => storeOf(key).set(key, value, ttlMs),
    remove: (key) => storeOf(key).remove(key),
    removeIfEquals: (key, value) => storeOf(key).removeIfEquals(key, value),
    increment: (key, delta, ttlMs) => storeOf(key).increment(key, delta, ttlMs),
    setIfAbsent: (key, value, ttlMs) => storeOf(key).setIfAbsent(key, value, ttlMs),
    size: () => all.reduce((total, store) => total + (store.size() ?? 0), 0),
    check: async () => {
      await Promise.all(all.map((store) => store.check()));
    },
    close: async () => {
      await Promise.all(all.map((store) => store.close()));
    },
  };
}
