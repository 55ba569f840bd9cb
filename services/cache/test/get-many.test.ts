import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { credentials, status, type ServiceError } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { bufferSerializer, cacheServiceClient, createCacheClient, type CacheClient, type CacheGrpcServiceClient, type GetManyResponse__Output } from '@sp/cache-client';
import { infra } from '../../../test/support/infra.js';
import { startCache, type RunningCache } from './cache-fixture.js';
import type { CacheConfig } from '../src/config.js';

const backends: Array<[string, () => CacheConfig['backend']]> = [
  ['memory', () => ({ kind: 'memory', capacity: 1000 })],
  ['redis', () => ({ kind: 'redis', url: infra('REDIS_URL'), keyPrefix: `test-${randomUUID()}:` })],
];

/** The service's count of OK calls of a method, from its metrics. */
async function okCalls(cache: RunningCache, method: string): Promise<number> {
  const match = new RegExp(`grpc_server_handling_seconds_count\\{service="cache",method="${method}",code="OK"\\} (\\d+)`).exec(await cache.registry.metrics());
  return Number(match?.[1] ?? 0);
}

describe.each(backends)('GetMany and coalesced gets, %s backend', (_name, backend) => {
  let cache: RunningCache;
  let raw: CacheGrpcServiceClient;
  let client: CacheClient<string>;

  beforeAll(async () => {
    cache = await startCache(backend());
    const Client = cacheServiceClient();
    raw = new Client(cache.address, credentials.createInsecure());
    client = createCacheClient<string>({ address: cache.address });
  });

  afterAll(async () => {
    raw.close();
    client.close();
    await cache.close();
  });

  const getMany = (keys: string[]): Promise<GetManyResponse__Output> =>
    new Promise((resolve, reject) => raw.GetMany({ keys }, (err: ServiceError | null, response?: GetManyResponse__Output) => (err ? reject(err) : resolve(response!))));

  it('should answer for each key what Get answers, in the order asked', async () => {
    await client.set('a', 'A');
    await client.set('c', 'C', 60_000);
    const { entries } = await getMany(['c', 'b', 'a', 'c']);
    expect(entries.map((entry) => (entry.found ? entry.value.toString() : null))).toEqual(['"C"', null, '"A"', '"C"']);
    expect(entries[0]!.expiresAtUnixMs).toBeGreaterThan(Date.now());
    expect(entries[2]!.expiresAtUnixMs).toBe(0);
  });

  it.each([
    ['no keys', []],
    ['1001 keys', Array.from({ length: 1001 }, (_, i) => `k${i}`)],
    ['an empty key among others', ['a', '']],
  ])('should answer INVALID_ARGUMENT for %s', async (_case, keys) => {
    await expect(getMany(keys)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
  });

  it('should send 100 gets made at the same moment as one GetMany, each with its own answer', async () => {
    for (let i = 0; i < 100; i += 2) await client.set(`many-${i}`, `value ${i}`);
    const before = { getMany: await okCalls(cache, 'GetMany'), get: await okCalls(cache, 'Get') };
    const answers = await Promise.all(Array.from({ length: 100 }, (_, i) => client.get(`many-${i}`)));
    expect(answers).toEqual(Array.from({ length: 100 }, (_, i) => (i % 2 === 0 ? `value ${i}` : undefined)));
    expect({ getMany: await okCalls(cache, 'GetMany'), get: await okCalls(cache, 'Get') }).toEqual({ getMany: before.getMany + 1, get: before.get });
  });

  it('should answer a bad key in a batch alone, and its neighbours as usual', async () => {
    await client.set('neighbour', 'fine');
    const [bad, good] = await Promise.allSettled([client.get(''), client.get('neighbour')]);
    expect(bad).toMatchObject({ status: 'rejected', reason: { status: 500 } });
    expect(good).toEqual({ status: 'fulfilled', value: 'fine' });
  });
});

describe('GetMany larger than the largest answer, redis backend', () => {
  let cache: RunningCache;
  let redis: Redis;

  beforeAll(async () => {
    cache = await startCache({ kind: 'redis', url: infra('REDIS_URL'), keyPrefix: `test-${randomUUID()}:` });
    redis = new Redis(infra('REDIS_URL'));
  });

  afterAll(async () => {
    redis.disconnect();
    await cache.close();
  });

  /** What Redis has sent its clients in all, from INFO. */
  const redisBytesSent = async (): Promise<number> => Number(/total_net_output_bytes:(\d+)/.exec(await redis.info('stats'))![1]);

  it('should refuse it RESOURCE_EXHAUSTED from the values\' lengths, without bringing the values in from Redis', async () => {
    const writer = createCacheClient<Buffer>({ address: cache.address }, bufferSerializer);
    const raw = new (cacheServiceClient())(cache.address, credentials.createInsecure());
    try {
      // Five values of 1 MiB: together over the largest answer (4 MiB), each within the largest value.
      const keys = Array.from({ length: 5 }, (_, i) => `large-${i}`);
      for (const key of keys) await writer.set(key, Buffer.alloc(1024 * 1024 - 64, 'v'));
      const before = await redisBytesSent();
      const refused = await new Promise<ServiceError | null>((resolve) => raw.GetMany({ keys }, (err: ServiceError | null) => resolve(err)));
      expect(refused).toMatchObject({ code: status.RESOURCE_EXHAUSTED });
      // Read first, the values alone would be 5 MiB sent by Redis.
      expect((await redisBytesSent()) - before).toBeLessThan(256 * 1024);
    } finally {
      writer.close();
      raw.close();
    }
  });
});
