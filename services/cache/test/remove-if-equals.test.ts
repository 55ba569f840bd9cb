import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { sleep } from '../../../test/support/eventually.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { rawCall, rawClient, startCache, type RawClient, type RunningCache } from './cache-fixture.js';
import { subscribe, type Subscription } from './subscription.js';
import type { CacheConfig } from '../src/config.js';

/** Clients that each open their own HTTP/2 connection (grpc-js otherwise shares one per address). */
const ownConnection = { 'grpc.use_local_subchannel_pool': 1 };

// A Redis of the test's own: Subscribe turns on keyspace notifications, a setting of the server.
let redis: PrivateRedis | undefined;
const backends: Array<[string, () => Promise<CacheConfig['backend']>]> = [
  ['memory', () => Promise.resolve({ kind: 'memory', capacity: 1000 })],
  ['redis', async () => ({ kind: 'redis', url: (redis = await startPrivateRedis()).url, keyPrefix: 'cad:' })],
];

describe.each(backends)('cache RemoveIfEquals (compare-and-delete), %s backend', (_name, backend) => {
  let cache: RunningCache;
  let clients: Array<CacheClient<string>>;
  let raw: RawClient;
  const open: Subscription[] = [];

  beforeAll(async () => {
    cache = await startCache(await backend(), 64 * 1024);
    clients = Array.from({ length: 4 }, () => createCacheClient<string>({ address: cache.address, deadlineMs: 5000, channelOptions: ownConnection }, stringSerializer));
    raw = rawClient(cache.address);
  });

  afterEach(() => {
    for (const subscription of open.splice(0)) subscription.cancel();
  });

  afterAll(async () => {
    clients.forEach((client) => client.close());
    raw.close();
    await cache.close();
    await redis?.stop();
    redis = undefined;
  });

  it('should remove the entry only when it holds exactly the value given', async () => {
    const [client] = clients as [CacheClient<string>];
    await client.set('held', 'mine', 60_000);
    expect(await client.removeIfEquals('held', 'theirs')).toBe(false);
    expect(await client.removeIfEquals('held', 'min')).toBe(false);
    expect(await client.get('held')).toBe('mine');
    expect(await client.removeIfEquals('held', 'mine')).toBe(true);
    expect(await client.get('held')).toBeUndefined();
    expect(await client.removeIfEquals('held', 'mine')).toBe(false);
    expect(await client.removeIfEquals('never-written', '')).toBe(false);
  });

  it('should compare bytes exactly, binary and empty values included', async () => {
    const bytes = Buffer.from([0, 0xff, 0x0d, 0x0a, 0x00, 0x80]);
    await rawCall(raw, 'Set', { key: 'binary', value: bytes });
    expect((await rawCall(raw, 'RemoveIfEquals', { key: 'binary', value: bytes.subarray(0, 5) })).found).toBe(false);
    expect((await rawCall(raw, 'RemoveIfEquals', { key: 'binary', value: Buffer.concat([bytes, Buffer.from([0])]) })).found).toBe(false);
    expect((await rawCall(raw, 'RemoveIfEquals', { key: 'binary', value: bytes })).found).toBe(true);
    await rawCall(raw, 'Set', { key: 'empty', value: Buffer.alloc(0) });
    expect((await rawCall(raw, 'RemoveIfEquals', { key: 'empty', value: Buffer.from('x') })).found).toBe(false);
    expect((await rawCall(raw, 'RemoveIfEquals', { key: 'empty', value: Buffer.alloc(0) })).found).toBe(true);
  });

  it('should not remove an expired entry (found = false), nor a counter by other digits', async () => {
    await clients[0]!.set('short', 'v', 100);
    await sleep(200);
    expect(await clients[0]!.removeIfEquals('short', 'v')).toBe(false);
    await clients[0]!.increment('count', 7);
    expect(await clients[1]!.removeIfEquals('count', '8')).toBe(false);
    expect(await clients[1]!.removeIfEquals('count', '7')).toBe(true);
  });

  it('should refuse an empty key and a value over the maximum with INVALID_ARGUMENT', async () => {
    await expect(rawCall(raw, 'RemoveIfEquals', { key: '', value: Buffer.from('v') })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    await expect(rawCall(raw, 'RemoveIfEquals', { key: 'k', value: Buffer.alloc(64 * 1024 + 1) })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details: 'value exceeds 65536 bytes' });
  });

  it('should let one of 100 concurrent releases of a lock remove it, and none remove the next holder', async () => {
    // The lock's first holder releases it from 100 calls spread over a few milliseconds and 4
    // connections, while a second holder takes it the moment it is free: however they interleave,
    // the second holder's lock must stay (a Get then Remove would remove it when its Get came
    // before the take and its Remove after). Twenty rounds, for twenty interleavings.
    for (let round = 0; round < 20; round++) {
      const key = `lock-${round}`;
      await clients[0]!.set(key, 'holder-1', 60_000);
      const takeOver = (async (): Promise<void> => {
        while (!(await clients[3]!.setIfAbsent(key, 'holder-2', 60_000)).stored);
      })();
      const releases = await Promise.all(
        Array.from({ length: 100 }, async (_, i) => {
          await sleep(i % 5);
          return clients[i % 3]!.removeIfEquals(key, 'holder-1');
        }),
      );
      await takeOver;
      expect({ round, removed: releases.filter(Boolean).length, holder: await clients[1]!.get(key) }).toEqual({ round, removed: 1, holder: 'holder-2' });
    }
  });

  it('should announce a removal on Subscribe as REMOVED, and nothing for a value that did not match', async () => {
    let subscription: Subscription;
    // The Redis backend answers UNAVAILABLE until its notification subscription is up.
    while ((subscription = await subscribe(cache.address, ['gone:'])).messages.length === 0) {
      subscription.cancel();
      await sleep(50);
    }
    open.push(subscription);
    await clients[0]!.set('gone:k', 'v1');
    expect(await clients[1]!.removeIfEquals('gone:k', 'v0')).toBe(false);
    expect(await clients[1]!.removeIfEquals('gone:k', 'v1')).toBe(true);
    await subscription.waitFor('REMOVED gone:k');
    await clients[0]!.set('gone:end', 'x');
    await subscription.waitFor('WRITTEN gone:end');
    expect(subscription.changes()).toEqual(['WRITTEN gone:k', 'REMOVED gone:k', 'WRITTEN gone:end']);
  });

  it('should count a removal in cache_removals_total and the calls by method', async () => {
    const text = await cache.registry.metrics();
    expect(text).toMatch(/cache_removals_total\{service="cache"\} [1-9]/);
    expect(text).toMatch(/grpc_server_handling_seconds_count\{service="cache",method="RemoveIfEquals",code="OK"\} [1-9]/);
    expect(text).toMatch(/grpc_server_handling_seconds_count\{service="cache",method="RemoveIfEquals",code="INVALID_ARGUMENT"\} [1-9]/);
  });
});
