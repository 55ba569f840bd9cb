import { randomUUID } from 'node:crypto';
import { poll, unavailable } from '@sp/core';
import type { CacheClient } from '@sp/cache-client';

export interface CacheLockOptions {
  /** How long a holder may keep the lock; it expires by itself if the holder dies. */
  ttlMs: number;
  /** Longest wait for the lock before giving up with 503. */
  waitMs: number;
  /** Pause between two tries. */
  pollMs?: number;
}

/**
 * Takes `key` in the cache service when nobody holds it: a SetIfAbsent record with a unique value
 * and a TTL, so a holder that dies frees it by itself. Resolves with the release, which removes the
 * record only while it still holds that value, in one atomic step (RemoveIfEquals): a holder that
 * outlived its TTL leaves the next holder's lock alone, even when the lock changed hands while the
 * release was on its way. Resolves with undefined when the key is held.
 */
export async function tryCacheLock(cache: CacheClient<unknown>, key: string, ttlMs: number): Promise<(() => Promise<void>) | undefined> {
  const id = randomUUID();
  if (!(await cache.setIfAbsent(key, id, ttlMs)).stored) return undefined;
  return async () => {
    await cache.removeIfEquals(key, id);
  };
}

/** Runs `work` while holding `key`, so one caller at a time runs it across every replica; waits for a held key. */
export async function withCacheLock<T>(cache: CacheClient<unknown>, key: string, options: CacheLockOptions, work: () => Promise<T>): Promise<T> {
  const release = await poll(() => tryCacheLock(cache, key, options.ttlMs), { waitMs: options.waitMs, pollMs: options.pollMs ?? 50 });
  if (release === undefined) throw unavailable('a concurrent login of the same user');
  try {
    return await work();
  } finally {
    await release().catch(() => undefined);
  }
}
