import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';
import { infra } from '../../../test/support/infra.js';
import { startCache, type RunningCache } from './cache-fixture.js';

const run = promisify(execFile);

/**
 * The cache service seen by grpcurl, a client nobody here wrote: it knows nothing of the proto file
 * and learns every service, message and field name from server reflection.
 */
describe('cache service through server reflection (grpcurl)', () => {
  let cache: RunningCache;
  const grpcurl = async (...args: string[]): Promise<string> => (await run(infra('GRPCURL_BIN'), ['-plaintext', ...args], { timeout: 10_000 })).stdout;
  const call = async (method: string, request: object): Promise<Record<string, unknown>> =>
    JSON.parse(await grpcurl('-d', JSON.stringify(request), cache.address, `cache.v1.CacheGrpcService/${method}`)) as Record<string, unknown>;

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 100 });
  });

  afterAll(async () => {
    await cache.close();
  });

  it('should list the cache service and the health service', async () => {
    const services = (await grpcurl(cache.address, 'list')).trim().split('\n');
    expect(services).toEqual(expect.arrayContaining(['cache.v1.CacheGrpcService', 'grpc.health.v1.Health']));
  });

  it('should describe the messages with the field names the proto spells', async () => {
    const request = await grpcurl(cache.address, 'describe', 'cache.v1.CacheRequest');
    expect(request).toMatch(/int64 ttl_ms = 3;/);
    expect(await grpcurl(cache.address, 'describe', 'cache.v1.CacheResponse')).toMatch(/int64 expires_at_unix_ms = 3;/);
    const service = await grpcurl(cache.address, 'describe', 'cache.v1.CacheGrpcService');
    expect(service).toMatch(/rpc Increment \( \.cache\.v1\.IncrementRequest \) returns \( \.cache\.v1\.IncrementResponse \);/);
    expect(service).toMatch(/rpc SetIfAbsent \( \.cache\.v1\.CacheRequest \) returns \( \.cache\.v1\.CacheResponse \);/);
    expect(service).toMatch(/rpc GetMany \( \.cache\.v1\.GetManyRequest \) returns \( \.cache\.v1\.GetManyResponse \);/);
    expect(service).toMatch(/rpc RemoveIfEquals \( \.cache\.v1\.CacheRequest \) returns \( \.cache\.v1\.CacheResponse \);/);
    expect(service).toMatch(/rpc Subscribe \( \.cache\.v1\.SubscribeRequest \) returns \( stream \.cache\.v1\.Invalidation \);/);
    expect(await grpcurl(cache.address, 'describe', 'cache.v1.Invalidation')).toMatch(/uint64 sequence = 1;[\s\S]*EVICTED = 5;/);
  });

  it('should stream invalidations to a grpcurl subscription', async () => {
    const child = spawn(infra('GRPCURL_BIN'), ['-plaintext', '-d', '{"prefixes":["session:"]}', cache.address, 'cache.v1.CacheGrpcService/Subscribe']);
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const client = createCacheClient<string>({ address: cache.address });
    try {
      await eventually(() => output.includes('"SUBSCRIBED"'), 10_000, 'SUBSCRIBED from grpcurl');
      await client.set('session:g', 'x');
      await client.remove('session:g');
      await eventually(() => output.includes('"REMOVED"'), 5000, 'REMOVED from grpcurl');
    } finally {
      client.close();
      child.kill();
    }
    // grpcurl prints each message as a JSON object; uint64 as a decimal string.
    const messages = output.split(/\n(?=\{)/).map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(messages.map((m) => m.sequence)).toEqual(messages.map((_m, i) => String(i + 1)));
    expect(messages.filter((m) => m.kind !== 'HEARTBEAT').map(({ key, kind }) => ({ key, kind }))).toEqual([
      { key: undefined, kind: 'SUBSCRIBED' },
      { key: 'session:g', kind: 'WRITTEN' },
      { key: 'session:g', kind: 'REMOVED' },
    ]);
  });

  it('should round-trip Set with ttl_ms and Get, and count with Increment', async () => {
    const before = Date.now();
    await call('Set', { key: 'k', value: Buffer.from('hello').toString('base64'), ttl_ms: 60_000 });
    const got = await call('Get', { key: 'k' });
    expect(got.found).toBe(true);
    expect(Buffer.from(got.value as string, 'base64').toString()).toBe('hello');
    // protojson prints int64 as a decimal string, under the field's JSON name.
    const expiresAt = Number(got.expiresAtUnixMs ?? got.expires_at_unix_ms);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);

    expect(await call('Increment', { key: 'n', delta: 2, ttl_ms: 60_000 })).toMatchObject({ value: '2' });
    expect(await call('Increment', { key: 'n', delta: 3 })).toMatchObject({ value: '5' });
  });

  it('should remove with RemoveIfEquals only an entry holding the value given', async () => {
    const base64 = (text: string): string => Buffer.from(text).toString('base64');
    await call('Set', { key: 'lock', value: base64('holder-1') });
    // protojson leaves out a field at its default: found = false prints as {}.
    expect(await call('RemoveIfEquals', { key: 'lock', value: base64('holder-2') })).toEqual({});
    expect(await call('RemoveIfEquals', { key: 'lock', value: base64('holder-1') })).toEqual({ found: true });
    expect(await call('Get', { key: 'lock' })).toEqual({});
  });

  it('should answer the health check', async () => {
    expect(JSON.parse(await grpcurl('-d', '{"service":"cache.v1.CacheGrpcService"}', cache.address, 'grpc.health.v1.Health/Check'))).toEqual({ status: 'SERVING' });
  });

  it('should refuse a TTL of int64 max naming the allowed range', async () => {
    await expect(call('Set', { key: 'k', value: '', ttl_ms: '9223372036854775807' })).rejects.toMatchObject({
      stderr: expect.stringMatching(/Code: InvalidArgument\s+Message: ttl_ms must be an integer from 0 \(no expiry\) to 31536000000 \(365 days\)/) as unknown,
    });
  });
});
