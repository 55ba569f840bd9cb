import { status } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { freePort, spawnRedis, startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { eventually, sleep } from '../../../test/support/eventually.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import { subscribe, type Subscription } from './subscription.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const open: Subscription[] = [];
const watch = async (address: string, prefixes: string[]): Promise<Subscription> => {
  const subscription = await subscribe(address, prefixes);
  open.push(subscription);
  return subscription;
};
afterEach(() => {
  for (const subscription of open.splice(0)) subscription.cancel();
});

describe('Subscribe on the memory backend', () => {
  let cache: RunningCache;
  let client: CacheClient<string>;

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 100 });
    client = createCacheClient<string>({ address: cache.address });
  });

  afterAll(async () => {
    client.close();
    await cache.close();
  });

  it('should start with SUBSCRIBED and announce every kind of change under the prefixes, numbered without gaps', async () => {
    const subscription = await watch(cache.address, ['session:', 'token:']);
    await client.set('session:a', 'one');
    await client.set('other:x', 'not watched');
    expect(await client.setIfAbsent('token:t', 'x')).toEqual({ stored: true });
    expect(await client.setIfAbsent('token:t', 'y')).toMatchObject({ stored: false }); // nothing changed
    await client.increment('session:n', 1);
    expect(await client.remove('session:a')).toBe(true);
    expect(await client.remove('session:a')).toBe(false); // nothing changed
    await client.set('session:short', 'x', 50);
    await sleep(80);
    expect(await client.get('session:short')).toBeUndefined();
    await subscription.waitFor('EXPIRED session:short');

    expect(subscription.changes()).toEqual(['WRITTEN session:a', 'WRITTEN token:t', 'WRITTEN session:n', 'REMOVED session:a', 'WRITTEN session:short', 'EXPIRED session:short']);
    expect(subscription.messages[0]).toEqual({ sequence: 1, kind: 'SUBSCRIBED', key: '' });
    expect(subscription.messages.map((m) => m.sequence)).toEqual(subscription.messages.map((_m, i) => i + 1));
  });

  it('should announce an expiry within a second though nobody reads the key', async () => {
    const subscription = await watch(cache.address, ['idle:']);
    await client.set('idle:short', 'x', 200);
    await subscription.waitFor('EXPIRED idle:short', 1000);
    expect(subscription.changes()).toEqual(['WRITTEN idle:short', 'EXPIRED idle:short']);
  });

  it('should count the open Subscribe streams in cache_subscriptions, from 0 before the first', async () => {
    const gauge = async (): Promise<string | undefined> => /^cache_subscriptions\{service="cache"\} (\d+)$/m.exec(await cache.registry.metrics())?.[1];
    // Exported at 0 while none is open (the streams of earlier tests end as they are cancelled).
    await eventually(async () => (await gauge()) === '0', 5000, 'cache_subscriptions at 0');
    const first = await watch(cache.address, ['a:']);
    await watch(cache.address, ['b:']);
    expect(await gauge()).toBe('2');
    first.cancel();
    await eventually(async () => (await gauge()) === '1', 5000, 'cache_subscriptions back to 1');
  });

  it('should announce the least recently used entry evicted by a write', async () => {
    const small = await startCache({ kind: 'memory', capacity: 2 });
    const writer = createCacheClient<string>({ address: small.address });
    try {
      const subscription = await watch(small.address, ['e:']);
      for (const key of ['e:1', 'e:2', 'e:3']) await writer.set(key, 'x');
      await subscription.waitFor('EVICTED e:1');
      expect(subscription.changes()).toEqual(['WRITTEN e:1', 'WRITTEN e:2', 'EVICTED e:1', 'WRITTEN e:3']);
    } finally {
      writer.close();
      await small.close();
    }
  });

  it('should send a heartbeat every second while nothing changes', async () => {
    const started = performance.now();
    const subscription = await watch(cache.address, ['quiet:']);
    // Two heartbeats as soon as they come (a busy machine delays timers: 2.3 s saw one in the pair).
    await eventually(() => subscription.messages.filter((m) => m.kind === 'HEARTBEAT').length >= 2, 10_000, 'two heartbeats');
    const kinds = subscription.messages.map((m) => m.kind);
    expect(kinds.slice(0, 3)).toEqual(['SUBSCRIBED', 'HEARTBEAT', 'HEARTBEAT']);
    expect(kinds.slice(1).every((kind) => kind === 'HEARTBEAT')).toBe(true);
    // One a second, not more often.
    expect(kinds.length - 1).toBeLessThanOrEqual(Math.floor((performance.now() - started) / 1000));
  });

  it('should refuse a subscription without prefixes with INVALID_ARGUMENT', async () => {
    const subscription = await watch(cache.address, []);
    expect(await subscription.ended).toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it('should end open streams with UNAVAILABLE when the replica shuts down', async () => {
    const other = await startCache({ kind: 'memory', capacity: 10 });
    const subscription = await watch(other.address, ['']);
    const closing = other.close();
    expect(await subscription.ended).toMatchObject({ code: status.UNAVAILABLE, details: 'this cache replica is shutting down' });
    await closing;
  });
});

describe('Subscribe on the Redis backend', () => {
  let redis: PrivateRedis;
  const replicas: RunningCache[] = [];
  let direct: Redis;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    direct = new Redis(redis.url);
    // An operator's own setting (keyevent notifications of list commands), which the service keeps.
    await direct.config('SET', 'notify-keyspace-events', 'El');
    for (let i = 0; i < 2; i++) replicas.push(await startCache({ kind: 'redis', url: redis.url, keyPrefix: 'inv:' }));
  }, HANG_GUARD_MS);

  afterAll(async () => {
    direct.disconnect();
    for (const cache of replicas) await cache.close();
    await redis.stop();
  });

  const subscribed = async (address: string, prefixes: string[]): Promise<Subscription> => {
    // Until the replica's notification subscription is up, Subscribe answers UNAVAILABLE.
    for (;;) {
      const subscription = await watch(address, prefixes);
      if (subscription.messages.length > 0) return subscription;
      await sleep(50);
    }
  };

  it('should turn on the keyspace notifications it needs, keeping the flags already set', async () => {
    await subscribed(replicas[0]!.address, ['']);
    const [, flags] = await direct.config('GET', 'notify-keyspace-events');
    expect([...flags!].sort()).toEqual([...'K$gxeEl'].sort());
  });

  it('should announce on one replica the writes made through the other, and by Redis itself expiry and eviction', async () => {
    const [first, second] = replicas as [RunningCache, RunningCache];
    const subscription = await subscribed(first.address, ['session:']);
    const through = createCacheClient<string>({ address: second.address });
    try {
      await through.set('session:a', 'one');
      await through.increment('session:n', 2);
      await through.setIfAbsent('session:lock', 'x');
      await through.remove('session:a');
      await through.set('elsewhere', 'not watched');
      await through.set('session:short', 'x', 30);
      await subscription.waitFor('EXPIRED session:short');
      expect(subscription.changes()).toEqual(['WRITTEN session:a', 'WRITTEN session:n', 'WRITTEN session:lock', 'REMOVED session:a', 'WRITTEN session:short', 'EXPIRED session:short']);

      // Redis evicts under maxmemory: the eviction is announced like any change.
      await direct.config('SET', 'maxmemory-policy', 'allkeys-random');
      await direct.config('SET', 'maxmemory', '1');
      await direct.set('noise', 'x').catch(() => undefined);
      await subscription.waitFor('EVICTED session:n');
    } finally {
      await direct.config('SET', 'maxmemory', '0');
      through.close();
    }
  });

  it('should announce an expiry within a second though nobody reads the key (Redis\' own active expiry)', async () => {
    const subscription = await subscribed(replicas[0]!.address, ['idle:']);
    const writer = createCacheClient<string>({ address: replicas[1]!.address });
    try {
      await writer.set('idle:short', 'x', 200);
      await subscription.waitFor('EXPIRED idle:short', 1000);
      expect(subscription.changes()).toEqual(['WRITTEN idle:short', 'EXPIRED idle:short']);
    } finally {
      writer.close();
    }
  });

  it('should end its streams with UNAVAILABLE when Redis goes away, and take subscriptions again once it is back', async () => {
    const subscription = await subscribed(replicas[0]!.address, ['']);
    await redis.stop();
    expect(await subscription.ended).toMatchObject({ code: status.UNAVAILABLE });
    const refused = await watch(replicas[0]!.address, ['']);
    expect(await refused.ended).toMatchObject({ code: status.UNAVAILABLE });
    await redis.start();
    const again = await subscribed(replicas[0]!.address, ['k']);
    const client = createCacheClient<string>({ address: replicas[1]!.address });
    try {
      await client.set('k1', 'v');
      await again.waitFor('WRITTEN k1');
    } finally {
      client.close();
    }
  });

  it('should answer FAILED_PRECONDITION naming the setting when Redis refuses CONFIG', async () => {
    const port = await freePort();
    const locked = await spawnRedis(port, ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no', '--rename-command', 'CONFIG', '']);
    const cache = await startCache({ kind: 'redis', url: `redis://127.0.0.1:${port}`, keyPrefix: 'inv:' });
    try {
      let ended;
      do {
        ended = await (await watch(cache.address, [''])).ended;
      } while (ended.code === status.UNAVAILABLE);
      expect(ended).toMatchObject({ code: status.FAILED_PRECONDITION, details: expect.stringContaining('notify-keyspace-events to include K$gxe') as unknown });
    } finally {
      await cache.close();
      await locked.kill();
    }
  });
});
