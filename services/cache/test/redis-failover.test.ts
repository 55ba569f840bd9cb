import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';
import { failoverUnderTraffic } from '../../../test/support/failover-traffic.js';
import { startRedisCluster, type RedisClusterSet } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const PREFIX = 'failover:';
const KEYS = Array.from({ length: 30 }, (_, i) => `key-${i}`);

describe.each([
  ['a Redis Cluster (3 primaries + 3 replicas)', startRedisCluster],
  ['Sentinel (1 primary, 2 replicas, 3 sentinels)', startRedisSentinel],
])('cache service on %s whose primary is killed', (_name, startSet) => {
  let cluster: RedisClusterSet;
  let cache: RunningCache;
  let client: CacheClient<string>;

  beforeAll(async () => {
    cluster = await startSet();
    cache = await startCache({ kind: 'redis', url: cluster.url, keyPrefix: PREFIX });
    client = createCacheClient<string>({ address: cache.address, deadlineMs: 2000, retries: 0 });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    client.close();
    await cache.close();
    await cluster.stop();
  });

  it('should spread keys over every primary, answer UNAVAILABLE fast only during the failover, then serve the acknowledged state without a restart', async () => {
    await eventually(() => client.set('warm-up', 'x').then(() => true));
    for (const key of KEYS) await client.set(key, `value of ${key}`);
    expect((await client.increment('counter', 5, 0)).value).toBe(5);
    const holders = new Set(await Promise.all(KEYS.map((key) => cluster.primaryPortOf(PREFIX + key))));
    expect([...holders].sort()).toEqual(await cluster.primaryPorts());

    const victim = await cluster.primaryPortOf(`${PREFIX}counter`);
    const { outcomes, killedAt, healthyAt } = await failoverUnderTraffic({
      call: (n) => (n % 2 === 0 ? client.get(KEYS[n % KEYS.length]!) : client.get('counter')),
      kill: () => cluster.kill(victim),
      waitUntilHealthy: () => cluster.waitUntilHealthy(),
      recovered: () => client.get('counter').then((value) => value !== undefined),
      what: 'the counter readable after the failover',
    });

    const failures = outcomes.filter((outcome) => outcome.error !== undefined);
    for (const failure of failures) {
      expect(failure.error).toMatchObject({ status: 503 });
      expect(failure.endedAt - failure.startedAt).toBeLessThan(1500);
      // Only calls in flight at the kill or made after it fail.
      expect(failure.endedAt).toBeGreaterThanOrEqual(killedAt);
    }
    expect(failures.every((failure) => failure.startedAt <= healthyAt + 3000)).toBe(true);
    expect(outcomes.filter((outcome) => outcome.error === undefined && outcome.startedAt > healthyAt).length).toBeGreaterThan(0);
    expect(await cluster.primaryPortOf(`${PREFIX}counter`)).not.toBe(victim);

    // Written and acknowledged well before the kill, so replicated: all still there.
    for (const key of KEYS) expect(await client.get(key)).toBe(`value of ${key}`);
    expect((await client.increment('counter', 1, 0)).value).toBe(6);
    await client.set('after', 'failover');
    expect(await client.get('after')).toBe('failover');
  }, 60_000);
});
