import { setTimeout as sleep } from 'node:timers/promises';
import type { CacheClient } from '@sp/cache-client';

/**
 * The same cache client, whose reads come back `delayMs` late (a slow network): what a caller
 * read may have changed in the cache service by the time it acts on it.
 */
export function withSlowReads<T>(cache: CacheClient<T>, delayMs: number): CacheClient<T> {
  return {
    ...cache,
    nearCache: cache.nearCache,
    async get(key) {
      const value = await cache.get(key);
      await sleep(delayMs);
      return value;
    },
  };
}
