import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { tryCacheLock, withCacheLock } from '../src/cache-lock.js';
import { withSlowReads } from './support/slow-reads.js';

describe('cache lock on the real cache service', () => {
  let cacheService: RunningCacheService;
  let cache: CacheClient<unknown>;

  beforeAll(async () => {
    cacheService = await startCacheService();
    cache = createCacheClient<unknown>({ address: cacheService.address });
  });

  afterAll(async () => {
    cache.close();
    await cacheService.close();
  });

  it('should not release the lock of the next holder when it changed hands while the release was on its way', async () => {
    // Holder 1's lock lives 300 ms; its release starts at 100 ms over a network whose reads
    // come back 400 ms late; holder 2 takes the lock once it expired, at 350 ms. A release that
    // read the lock (holder 1's, at 100 ms) and then removed it (at 500 ms) removed holder 2's.
    const release1 = await tryCacheLock(withSlowReads(cache, 400), 'lock:race', 300);
    expect(release1).toBeDefined();
    await sleep(100);
    const releasing = release1!();
    await sleep(250);
    const release2 = await tryCacheLock(cache, 'lock:race', 60_000);
    expect(release2).toBeDefined();
    await releasing;
    await sleep(200);
    expect(await tryCacheLock(cache, 'lock:race', 60_000)).toBeUndefined();
    await release2!();
    expect(await tryCacheLock(cache, 'lock:race', 60_000)).toBeDefined();
  });

  it('should run the work of concurrent callers one at a time and free the lock after each', async () => {
    let inside = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      most = Math.max(most, ++inside);
      await sleep(20);
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withCacheLock(cache, 'lock:serial', { ttlMs: 10_000, waitMs: 5000, pollMs: 10 }, work)));
    expect(most).toBe(1);
    expect(await cache.get('lock:serial')).toBeUndefined();
  });
});
