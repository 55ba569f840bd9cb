import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { infra } from '../../../test/support/infra.js';
import { rawCall, rawClient, startCache, type RawClient, type RunningCache } from './cache-fixture.js';
import type { CacheConfig } from '../src/config.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const backends: Array<[string, () => CacheConfig['backend']]> = [
  ['memory', () => ({ kind: 'memory', capacity: 1000 })],
  ['redis', () => ({ kind: 'redis', url: infra('REDIS_URL'), keyPrefix: `atomic-${randomUUID()}:` })],
];

/** Clients that each open their own HTTP/2 connection (grpc-js otherwise shares one per address). */
const ownConnection = { 'grpc.use_local_subchannel_pool': 1 };

describe.each(backends)('cache Increment and SetIfAbsent, %s backend', (_name, backend) => {
  let cache: RunningCache;
  let clients: Array<CacheClient<string>>;
  let raw: RawClient;

  beforeAll(async () => {
    cache = await startCache(backend(), 64 * 1024);
    clients = Array.from({ length: 4 }, () => createCacheClient<string>({ address: cache.address, deadlineMs: 5000, channelOptions: ownConnection }, stringSerializer));
    raw = rawClient(cache.address);
  });

  afterAll(async () => {
    clients.forEach((client) => client.close());
    raw.close();
    await cache.close();
  });

  it('should count 200 concurrent increments over 4 connections exactly: answers 1..200, final 200', async () => {
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => clients[i % 4]!.increment('hits', 1, 60_000)));
    expect(answers.map((a) => a.value).sort((a, b) => a - b)).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
    expect(new Set(answers.map((a) => a.expiresAtUnixMs)).size).toBe(1);
    expect((await clients[0]!.increment('hits', 0)).value).toBe(200);
    expect(await clients[1]!.get('hits')).toBe('200');
  });

  it('should store exactly one of 100 concurrent SetIfAbsent calls and show the winner to all others', async () => {
    const results = await Promise.all(Array.from({ length: 100 }, (_, i) => clients[i % 4]!.setIfAbsent('claim', `writer-${i}`, 60_000)));
    const winners = results.map((result, i) => (result.stored ? `writer-${i}` : undefined)).filter((w) => w !== undefined);
    expect(winners).toHaveLength(1);
    expect(await clients[0]!.get('claim')).toBe(winners[0]);
    for (const result of results) if (!result.stored) expect(result.value).toBe(winners[0]);
  });

  it('should keep the expiry of a live entry that SetIfAbsent finds', async () => {
    const first = await rawCall(raw, 'SetIfAbsent', { key: 'kept', value: Buffer.from('one'), ttlMs: 60_000 });
    expect(first.found).toBe(false);
    expect(first.expiresAtUnixMs).toBeGreaterThan(Date.now() + 50_000);
    await sleep(20);
    const second = await rawCall(raw, 'SetIfAbsent', { key: 'kept', value: Buffer.from('two'), ttlMs: 600_000 });
    expect(second).toMatchObject({ found: true, expiresAtUnixMs: first.expiresAtUnixMs });
    expect(second.value.toString()).toBe('one');
  });

  it('should store again with SetIfAbsent once the entry expired', async () => {
    expect((await clients[0]!.setIfAbsent('short-claim', 'first', 200)).stored).toBe(true);
    expect(await clients[1]!.setIfAbsent('short-claim', 'second', 200)).toEqual({ stored: false, value: 'first' });
    await sleep(300);
    expect((await clients[2]!.setIfAbsent('short-claim', 'third', 200)).stored).toBe(true);
    expect(await clients[3]!.get('short-claim')).toBe('third');
  });

  it('should fix the window when the counter is created: later increments do not move it, expiry resets it', async () => {
    const created = await rawCall(raw, 'Increment', { key: 'window', delta: 1, ttlMs: 400 });
    expect(created.value).toBe(1);
    expect(created.expiresAtUnixMs).toBeGreaterThan(Date.now());
    await sleep(150);
    const later = await rawCall(raw, 'Increment', { key: 'window', delta: 1, ttlMs: 400 });
    expect(later).toMatchObject({ value: 2, expiresAtUnixMs: created.expiresAtUnixMs });
    await sleep(150);
    expect(await rawCall(raw, 'Increment', { key: 'window', delta: 5, ttlMs: 400 })).toMatchObject({ value: 7, expiresAtUnixMs: created.expiresAtUnixMs });
    // 300 ms after creation the window is still open; at 400 ms it closes, whatever came in between.
    await sleep(Math.max(0, created.expiresAtUnixMs - Date.now()) + 50);
    const fresh = await rawCall(raw, 'Increment', { key: 'window', delta: 1, ttlMs: 400 });
    expect(fresh.value).toBe(1);
    expect(fresh.expiresAtUnixMs).toBeGreaterThan(created.expiresAtUnixMs);
  });

  it('should keep a counter without expiry when created with ttl 0, and count down with negative deltas', async () => {
    expect(await rawCall(raw, 'Increment', { key: 'forever', delta: -3 })).toMatchObject({ value: -3, expiresAtUnixMs: 0 });
    expect(await clients[0]!.increment('forever', 10, 60_000)).toEqual({ value: 7, expiresAtUnixMs: 0 });
    expect((await rawCall(raw, 'Get', { key: 'forever' })).expiresAtUnixMs).toBe(0);
  });

  it('should refuse to increment a value that is not a counter, leaving it as it was', async () => {
    await clients[0]!.set('text', 'hello', 60_000);
    await expect(rawCall(raw, 'Increment', { key: 'text', delta: 1 })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION, details: 'the live value under this key is not a counter' });
    await expect(clients[0]!.increment('text')).rejects.toMatchObject({ status: 500 });
    expect(await clients[0]!.get('text')).toBe('hello');
    for (const notCounter of ['', '1.5', '1e3', ' 1', '+1', '12345678901234567', '--1']) {
      await clients[0]!.set('text', notCounter);
      await expect(rawCall(raw, 'Increment', { key: 'text', delta: 1 })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION });
    }
  });

  it('should treat a value set as decimal digits as a counter', async () => {
    await clients[0]!.set('digits', '41', 60_000);
    expect((await clients[1]!.increment('digits')).value).toBe(42);
  });

  it('should refuse a result beyond the safe integers and keep the counter', async () => {
    await clients[0]!.set('big', String(Number.MAX_SAFE_INTEGER - 1));
    expect((await clients[0]!.increment('big')).value).toBe(Number.MAX_SAFE_INTEGER);
    await expect(rawCall(raw, 'Increment', { key: 'big', delta: 1 })).rejects.toMatchObject({ code: status.FAILED_PRECONDITION, details: 'the counter would leave the range ±9007199254740991' });
    expect((await clients[0]!.increment('big', -Number.MAX_SAFE_INTEGER)).value).toBe(0);
  });

  it('should count Increment and SetIfAbsent in the metrics', async () => {
    const text = await cache.registry.metrics();
    expect(text).toMatch(/cache_increments_total\{service="cache"\} [1-9]/);
    expect(text).toMatch(/cache_set_if_absent_total\{result="stored",service="cache"\} [1-9]/);
    expect(text).toMatch(/cache_set_if_absent_total\{result="found",service="cache"\} [1-9]/);
    expect(text).toMatch(/grpc_server_handling_seconds_count\{service="cache",method="Increment",code="FAILED_PRECONDITION"\} [1-9]/);
  });
});
