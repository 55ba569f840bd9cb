import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

describe('two replicas of the cache service on one Redis', () => {
  let redis: PrivateRedis;
  const replicas: RunningCache[] = [];
  const clients: Array<CacheClient<string>> = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    // A deadline far above any latency: the test is about the count being exact, and an increment
    // that missed its deadline on a busy machine cannot be retried without maybe counting twice.
    for (let i = 0; i < 2; i++) {
      const cache = await startCache({ kind: 'redis', url: redis.url, keyPrefix: 'replicas:' });
      replicas.push(cache);
      clients.push(createCacheClient<string>({ address: cache.address, deadlineMs: 30_000 }));
    }
  }, HANG_GUARD_MS);

  afterAll(async () => {
    for (const client of clients) client.close();
    for (const cache of replicas) await cache.close();
    await redis.stop();
  });

  it('should read through one replica what was set, removed or counted through the other', async () => {
    const [first, second] = clients as [CacheClient<string>, CacheClient<string>];
    await first.set('greeting', 'hello');
    expect(await second.get('greeting')).toBe('hello');
    expect(await second.remove('greeting')).toBe(true);
    expect(await first.get('greeting')).toBeUndefined();

    expect(await first.setIfAbsent('lock', 'first')).toEqual({ stored: true });
    expect(await second.setIfAbsent('lock', 'second')).toEqual({ stored: false, value: 'first' });

    // Increments spread over both replicas at once add up exactly: the count lives in Redis only.
    await Promise.all(Array.from({ length: 200 }, (_, i) => clients[i % 2]!.increment('hits', 1, 60_000)));
    expect((await second.increment('hits', 0, 60_000)).value).toBe(200);
  });
});
