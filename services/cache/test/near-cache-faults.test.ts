import { afterEach, describe, expect, it } from '@jest/globals';
import type { CacheClient } from '@sp/cache-client';
import { sleep } from '../../../test/support/eventually.js';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { startPrivateRedis } from '../../../test/support/redis-server.js';
import { startTcpProxy } from '../../../test/support/tcp-proxy.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import { keepReading, nearClient, plainClient, servedFromMemory, staleReads, write, type Write } from './near-cache-clients.js';

const KEY = 'session:fault';
const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});


/**
 * A reads KEY all along; B writes v1 (A caches it), the fault happens, B writes v2 while it lasts
 * and v3 after, and A serves from memory again at the end. No read may answer an older value than
 * the last write that completed before the read began.
 */
async function faultUnderTraffic(a: CacheClient<string>, b: CacheClient<string>, fault: { start(): Promise<void>; end(): Promise<void> }): Promise<void> {
  const writes: Write[] = [];
  await a.nearCache!.whenLive(15_000);
  await write(b, KEY, 'v1', writes);
  await servedFromMemory(a, KEY, 'v1', 15_000);
  const reading = keepReading(a, KEY);
  await sleep(100);
  await fault.start();
  await write(b, KEY, 'v2', writes);
  await sleep(200);
  await fault.end();
  await write(b, KEY, 'v3', writes);
  await a.nearCache!.whenLive(20_000);
  await servedFromMemory(a, KEY, 'v3', 15_000);
  const reads = await reading.stop();
  expect(staleReads(reads, writes)).toEqual([]);
  expect(reads.filter((read) => read.error === undefined && read.value === 'v3').length).toBeGreaterThan(0);
  expect(a.nearCache!.flushes).toBeGreaterThan(0);
}

describe('near cache under faults: no stale value after the write that followed', () => {
  it('should flush when its stream is cut and read the write made meanwhile', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const first = await startCache({ kind: 'redis', url: redis.url, keyPrefix: 'faults:' });
    const second = await startCache({ kind: 'redis', url: redis.url, keyPrefix: 'faults:' });
    cleanups.push(() => first.close(), () => second.close());
    const proxy = await startTcpProxy(new URL(`http://${first.address}`));
    cleanups.push(() => proxy.close());
    const a = nearClient(new URL(proxy.url).host);
    const b = plainClient(second.address);
    cleanups.push(() => a.close(), () => b.close());
    await faultUnderTraffic(a, b, { start: () => proxy.cut(), end: () => proxy.restore() });
  }, 60_000);

  it('should flush when its cache replica restarts and read the write made meanwhile through another', async () => {
    const redis = await startPrivateRedis();
    cleanups.push(() => redis.stop());
    const backend = { kind: 'redis' as const, url: redis.url, keyPrefix: 'faults:' };
    let first: RunningCache = await startCache(backend);
    const second = await startCache(backend);
    cleanups.push(() => first.close(), () => second.close());
    const a = nearClient(first.address);
    const b = plainClient(second.address);
    cleanups.push(() => a.close(), () => b.close());
    const port = Number(first.address.split(':')[1]);
    await faultUnderTraffic(a, b, {
      start: () => first.close(),
      end: async () => {
        first = await startCache(backend, undefined, port);
      },
    });
  }, 60_000);

  it.each([
    ['Sentinel', startRedisSentinel],
    ['a Redis Cluster', startRedisCluster],
  ])('should flush on a failover of %s and read the write made after it', async (_name, startSet) => {
    const set = await startSet();
    cleanups.push(() => set.stop());
    const first = await startCache({ kind: 'redis', url: set.url, keyPrefix: 'faults:' });
    const second = await startCache({ kind: 'redis', url: set.url, keyPrefix: 'faults:' });
    cleanups.push(() => first.close(), () => second.close());
    const a = nearClient(first.address);
    const b = plainClient(second.address);
    cleanups.push(() => a.close(), () => b.close());
    await faultUnderTraffic(a, b, {
      start: async () => set.kill(await set.primaryPortOf(`faults:${KEY}`)),
      end: () => set.waitUntilHealthy(),
    });
  }, 90_000);
});
