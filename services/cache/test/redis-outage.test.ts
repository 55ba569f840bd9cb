import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { healthCheck, startCache, type RunningCache } from './cache-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

describe('cache service when Redis goes away and comes back', () => {
  let redis: PrivateRedis;
  let cache: RunningCache;
  let client: CacheClient<string>;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    cache = await startCache({ kind: 'redis', url: redis.url, keyPrefix: 'outage:' }, undefined, 0, { healthRefreshMs: 100 });
    client = createCacheClient<string>({ address: cache.address, deadlineMs: 1000, retries: 2 });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    client.close();
    await cache.close();
    await redis.stop();
  });

  it('should fail with UNAVAILABLE within the deadline while Redis is down, and recover without a restart', async () => {
    expect(await healthCheck(cache.address, '')).toBe('SERVING');
    await client.set('k', 'before');
    expect(await client.get('k')).toBe('before');
    expect((await client.increment('n', 1, 60_000)).value).toBe(1);
    expect(await client.setIfAbsent('claim', 'before')).toEqual({ stored: true });

    await redis.stop();
    const calls = [() => client.get('k'), () => client.set('k', 'during'), () => client.remove('k'), () => client.increment('n'), () => client.setIfAbsent('claim', 'during')];
    for (const call of calls) {
      const started = Date.now();
      await expect(call()).rejects.toMatchObject({ status: 503, message: 'cache service is unavailable' });
      expect(Date.now() - started).toBeLessThan(1500);
    }
    await expect(cache.service.readiness[0]!.check()).rejects.toThrow('redis is unavailable');
    // What a Kubernetes gRPC probe sees: the health status follows the store's readiness.
    await eventually(async () => (await healthCheck(cache.address, 'cache.v1.CacheGrpcService')) === 'NOT_SERVING', 5000, 'NOT_SERVING');

    await redis.start();
    const deadline = Date.now() + 10_000;
    let value: string | undefined;
    while (Date.now() < deadline) {
      value = await client.set('k', 'after').then(() => client.get('k'), () => undefined);
      if (value !== undefined) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(value).toBe('after');
    // The private server keeps no data across the restart: the atomic operations start afresh.
    expect((await client.increment('n', 1, 60_000)).value).toBe(1);
    expect(await client.setIfAbsent('claim', 'after')).toEqual({ stored: true });
    await expect(cache.service.readiness[0]!.check()).resolves.toBeUndefined();
    await eventually(async () => (await healthCheck(cache.address, '')) === 'SERVING', 5000, 'SERVING again');
  });
});
