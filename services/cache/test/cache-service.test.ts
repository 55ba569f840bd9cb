import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { bufferSerializer, createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { infra } from '../../../test/support/infra.js';
import { healthCheck, rawCall, rawClient, startCache, type RawRequest, type RunningCache } from './cache-fixture.js';
import type { CacheConfig } from '../src/config.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const backends: Array<[string, () => CacheConfig['backend']]> = [
  ['memory', () => ({ kind: 'memory', capacity: 1000 })],
  ['redis', () => ({ kind: 'redis', url: infra('REDIS_URL'), keyPrefix: `test-${randomUUID()}:` })],
];

describe.each(backends)('cache service over gRPC, %s backend', (_name, backend) => {
  let cache: RunningCache;
  let client: CacheClient<unknown>;
  let raw: ReturnType<typeof rawClient>;

  beforeAll(async () => {
    cache = await startCache(backend(), 64 * 1024);
    client = createCacheClient({ address: cache.address, deadlineMs: 2000 });
    raw = rawClient(cache.address);
  });

  afterAll(async () => {
    client.close();
    raw.close();
    await cache.close();
  });

  it('should round-trip JSON values through set and get', async () => {
    const value = { tokenId: 'abc', roles: ['client'], nested: { n: 1.5, ok: true } };
    await client.set('json-key', value);
    expect(await client.get('json-key')).toEqual(value);
  });

  it('should pass strings and Buffers through as they are', async () => {
    const strings = createCacheClient<string>({ address: cache.address }, stringSerializer);
    const buffers = createCacheClient<Buffer>({ address: cache.address }, bufferSerializer);
    try {
      await strings.set('text-key', 'héllo ✓');
      expect(await strings.get('text-key')).toBe('héllo ✓');
      const bytes = Buffer.from([0, 255, 1, 254, 0]);
      await buffers.set('bytes-key', bytes);
      expect(await buffers.get('bytes-key')).toEqual(bytes);
    } finally {
      strings.close();
      buffers.close();
    }
  });

  it('should answer a miss with found=false and status OK', async () => {
    expect(await client.get('never-set')).toBeUndefined();
    await expect(rawCall(raw, 'Get', { key: 'never-set' })).resolves.toMatchObject({ found: false, expiresAtUnixMs: 0 });
  });

  it('should replace a value and report its expiry as a Unix timestamp', async () => {
    await client.set('replace-key', 'first');
    const before = Date.now();
    await rawCall(raw, 'Set', { key: 'replace-key', value: Buffer.from('"second"'), ttlMs: 60_000 });
    const response = await rawCall(raw, 'Get', { key: 'replace-key' });
    expect(response.value.toString()).toBe('"second"');
    expect(response.expiresAtUnixMs).toBeGreaterThanOrEqual(before + 60_000);
    expect(response.expiresAtUnixMs).toBeLessThanOrEqual(Date.now() + 60_000);
  });

  it('should expire an entry after its TTL', async () => {
    await client.set('ttl-key', 'short-lived', 300);
    await client.set('ttl-keep', 'long-lived', 60_000);
    expect(await client.get('ttl-key')).toBe('short-lived');
    await sleep(450);
    expect(await client.get('ttl-key')).toBeUndefined();
    expect(await client.get('ttl-keep')).toBe('long-lived');
  });

  it('should report whether remove found a key', async () => {
    await client.set('remove-key', 1);
    expect(await client.remove('remove-key')).toBe(true);
    expect(await client.get('remove-key')).toBeUndefined();
    expect(await client.remove('remove-key')).toBe(false);
    expect(await client.remove('never-set')).toBe(false);
  });

  it.each([
    ['an empty key', 'Get', { key: '' }, 'key is required'],
    ['an empty key on Set', 'Set', { key: '', value: Buffer.from('1') }, 'key is required'],
    ['an empty key on Remove', 'Remove', { key: '' }, 'key is required'],
    ['a key over 1024 bytes', 'Get', { key: 'é'.repeat(513) }, 'key exceeds 1024 bytes'],
    ['a negative ttl', 'Set', { key: 'k', value: Buffer.from('1'), ttlMs: -1 }, 'ttl_ms must be an integer from 0 (no expiry) to 31536000000 (365 days), got -1'],
    ['a ttl of one day over the maximum', 'Set', { key: 'k', value: Buffer.from('1'), ttlMs: 366 * 86_400_000 }, 'ttl_ms must be an integer from 0 (no expiry) to 31536000000 (365 days), got 31622400000'],
    ['a ttl of int64 max', 'SetIfAbsent', { key: 'k', value: Buffer.from('1'), ttlMs: '9223372036854775807' }, 'ttl_ms must be an integer from 0 (no expiry) to 31536000000 (365 days), got 9223372036854776000'],
    ['a negative ttl on Increment', 'Increment', { key: 'k', delta: 1, ttlMs: -5 }, 'ttl_ms must be an integer from 0 (no expiry) to 31536000000 (365 days), got -5'],
    ['a delta beyond the safe integers', 'Increment', { key: 'k', delta: '9007199254740992' }, 'delta must be an integer from -9007199254740991 to 9007199254740991, got 9007199254740992'],
    ['an empty key on Increment', 'Increment', { key: '', delta: 1 }, 'key is required'],
    ['a value over the maximum on SetIfAbsent', 'SetIfAbsent', { key: 'k', value: Buffer.alloc(64 * 1024 + 1) }, 'value exceeds 65536 bytes'],
    ['a value over the maximum', 'Set', { key: 'k', value: Buffer.alloc(64 * 1024 + 1) }, 'value exceeds 65536 bytes'],
  ] as const)('should answer INVALID_ARGUMENT for %s', async (_case, method, request, details) => {
    await expect(rawCall(raw, method, request as RawRequest)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details });
  });

  it('should accept a key of exactly 1024 bytes and a value of exactly the maximum', async () => {
    const key = 'k'.repeat(1024);
    await rawCall(raw, 'Set', { key, value: Buffer.alloc(64 * 1024, 7) });
    expect((await rawCall(raw, 'Get', { key })).value.length).toBe(64 * 1024);
  });

  it('should report SERVING on the gRPC health service', async () => {
    expect(await healthCheck(cache.address, '')).toBe('SERVING');
    expect(await healthCheck(cache.address, 'cache.v1.CacheGrpcService')).toBe('SERVING');
  });

  it('should count hits and misses in its metrics', async () => {
    await client.set('metric-key', 1);
    await client.get('metric-key');
    await client.get('metric-miss');
    const text = await cache.registry.metrics();
    expect(text).toMatch(/cache_hits_total\{service="cache"\} [1-9]/);
    expect(text).toMatch(/cache_misses_total\{service="cache"\} [1-9]/);
    expect(text).toMatch(/grpc_server_handling_seconds_count\{service="cache",method="Get",code="OK"\} [1-9]/);
    expect(text).toMatch(/grpc_server_handling_seconds_count\{service="cache",method="Set",code="INVALID_ARGUMENT"\} [1-9]/);
  });
});

describe('cache service LRU eviction (memory backend)', () => {
  it('should evict the least recently used entry: reading A then inserting D evicts B, not A', async () => {
    const cache = await startCache({ kind: 'memory', capacity: 3 });
    const client = createCacheClient<string>({ address: cache.address }, stringSerializer);
    try {
      await client.set('A', 'a');
      await client.set('B', 'b');
      await client.set('C', 'c');
      expect(await client.get('A')).toBe('a');
      await client.set('D', 'd');
      expect(await client.get('B')).toBeUndefined();
      expect(await client.get('A')).toBe('a');
      expect(await client.get('C')).toBe('c');
      expect(await client.get('D')).toBe('d');
      expect(await cache.registry.metrics()).toMatch(/cache_evictions_total\{service="cache"\} 1\b/);
      expect(await cache.registry.metrics()).toMatch(/cache_items\{service="cache"\} 3\b/);
    } finally {
      client.close();
      await cache.close();
    }
  });
});
