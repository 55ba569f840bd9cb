import { randomUUID } from 'node:crypto';
import { unavailable } from '@sp/platform';
import type { CacheClient } from '@sp/cache-client';

export interface CacheLockOptions {
  /** How long a holder may keep the lock; it expires by itself if the holder dies. */
  ttlMs: number;
  /** Longest wait for the lock before giving up with 503. */
  waitMs: number;
  /** Pause between two tries. */
  pollMs?: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Runs `work` while holding `key` in the cache service, so one caller at a time runs it across
 * every replica. The lock is a SetIfAbsent record with a unique value and a TTL; it is removed
 * afterwards only while it still holds that value (a holder that outlived its TTL leaves the next
 * holder's lock alone).
 */
export async function withCacheLock<T>(cache: CacheClient<unknown>, key: string, options: CacheLockOptions, work: () => Promise<T>): Promise<T> {
  const id = randomUUID();
  const giveUpAt = Date.now() + options.waitMs;
  while (!(await cache.setIfAbsent(key, id, options.ttlMs)).stored) {
    if (Date.now() >= giveUpAt) throw unavailable('a concurrent login of the same user');
    await sleep(options.pollMs ?? 50);
  }
  try {
    return await work();
  } finally {
    if ((await cache.get(key).catch(() => undefined)) === id) await cache.remove(key).catch(() => false);
  }
}
