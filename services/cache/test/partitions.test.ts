import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { configProblems } from '../../../test/support/config-problems.js';
import { loadConfig } from '../src/config.js';
import { rawCall, rawClient, startCache, type RawClient, type RunningCache } from './cache-fixture.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('memory backend partitions (Cache__Partitions)', () => {
  let cache: RunningCache;
  let client: CacheClient<string>;
  let raw: RawClient;

  beforeAll(async () => {
    cache = await startCache({
      kind: 'memory',
      capacity: 50,
      partitions: [
        { prefix: 'oidc:', capacity: 100, policy: 'lru' },
        { prefix: 'ratelimit:', capacity: 20, policy: 'reject' },
      ],
    });
    client = createCacheClient<string>({ address: cache.address, retries: 0, deadlineMs: 10_000 }, stringSerializer);
    raw = rawClient(cache.address);
  });

  afterAll(async () => {
    client.close();
    raw.close();
    await cache.close();
  });

  it('should let a flood of one prefix push out only entries of that prefix', async () => {
    for (let i = 0; i < 40; i++) await client.set(`token:${i}`, `session-${i}`, 60_000);
    for (let i = 0; i < 10; i++) await client.increment(`ratelimit:ip:${i}`, 1, 60_000);
    for (let batch = 0; batch < 10; batch++) await Promise.all(Array.from({ length: 500 }, (_, i) => client.set(`oidc:${batch * 500 + i}`, 'verifier', 300_000)));
    for (let i = 0; i < 40; i++) expect(await client.get(`token:${i}`)).toBe(`session-${i}`);
    for (let i = 0; i < 10; i++) expect((await client.increment(`ratelimit:ip:${i}`, 0)).value).toBe(1);
    // The login states keep only the newest ones, within their own capacity.
    expect(await client.get('oidc:0')).toBeUndefined();
    expect(await client.get('oidc:4999')).toBe('verifier');
    expect(await cache.registry.metrics()).toMatch(/cache_items\{service="cache"\} 150\b/);
  });

  it('should refuse new keys in a full partition with the reject policy, and never evict its entries', async () => {
    for (let i = 10; i < 20; i++) await client.increment(`ratelimit:ip:${i}`, 1, 60_000);
    await expect(rawCall(raw, 'Increment', { key: 'ratelimit:ip:new', delta: 1, ttlMs: 60_000 })).rejects.toMatchObject({
      code: status.RESOURCE_EXHAUSTED,
      details: 'the cache holds its most entries (20) for keys under "ratelimit:"; new ones fit as others expire',
    });
    await expect(rawCall(raw, 'SetIfAbsent', { key: 'ratelimit:claim', value: Buffer.from('x') })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    await expect(rawCall(raw, 'Set', { key: 'ratelimit:other', value: Buffer.from('x') })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    // The typed client surfaces it as the cache being unavailable for now (503 to the caller).
    await expect(client.increment('ratelimit:ip:new')).rejects.toMatchObject({ status: 503 });
    // Existing entries still count and change.
    expect((await client.increment('ratelimit:ip:0')).value).toBe(2);
    await client.set('ratelimit:ip:1', '7', 60_000);
    for (let i = 2; i < 20; i++) expect((await client.increment(`ratelimit:ip:${i}`, 0)).value).toBe(1);
    expect(await cache.registry.metrics()).toMatch(/cache_rejections_total\{service="cache"\} [1-9]/);
  });

  it('should make room in a rejecting partition as its entries expire', async () => {
    const short = await startCache({ kind: 'memory', capacity: 10, partitions: [{ prefix: 'otp:', capacity: 3, policy: 'reject' }] });
    const shortClient = createCacheClient<string>({ address: short.address, retries: 0 }, stringSerializer);
    try {
      for (let i = 0; i < 3; i++) await shortClient.set(`otp:${i}`, 'secret', 1500);
      await expect(shortClient.set('otp:late', 'secret', 1500)).rejects.toMatchObject({ status: 503 });
      await sleep(1600);
      await shortClient.set('otp:late', 'secret', 60_000);
      expect(await shortClient.get('otp:late')).toBe('secret');
    } finally {
      shortClient.close();
      await short.close();
    }
  });
});

describe('Cache__Partitions configuration', () => {
  it('should read prefixes with their capacity and policy (lru by default)', () => {
    const config = loadConfig({ Cache__Partitions: 'oidc:=10000, otp:=20000/reject,ratelimit:=20000/lru' });
    expect(config.backend).toEqual({
      kind: 'memory',
      capacity: 1000,
      partitions: [
        { prefix: 'oidc:', capacity: 10000, policy: 'lru' },
        { prefix: 'otp:', capacity: 20000, policy: 'reject' },
        { prefix: 'ratelimit:', capacity: 20000, policy: 'lru' },
      ],
    });
  });

  it.each([
    ['oidc:', 'Cache__Partitions: "oidc:" must be prefix=capacity, optionally /lru or /reject (e.g. oidc:=10000/lru)'],
    ['oidc:=0', 'Cache__Partitions: "oidc:=0" must be prefix=capacity, optionally /lru or /reject (e.g. oidc:=10000/lru)'],
    ['oidc:=10/drop', 'Cache__Partitions: "oidc:=10/drop" must be prefix=capacity, optionally /lru or /reject (e.g. oidc:=10000/lru)'],
    ['a:=1,a:=2', 'Cache__Partitions: prefix "a:" is given twice'],
  ])('should refuse %s', (value, problem) => {
    expect(configProblems(() => loadConfig({ Cache__Partitions: value }))).toEqual([problem]);
  });
});
