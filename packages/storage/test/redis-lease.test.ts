import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { infra } from '../../../test/support/infra.js';
import { createRedisLeases, holdsLua, releaseIfHeldLua, type RedisLeases } from '../src/redis-lease.js';
import { connectRedis } from '../src/redis.js';
import { createRedisStoreBase } from '../src/redis-store-base.js';

describe('token-held leases on Redis', () => {
  const prefix = `lease-test-${randomUUID()}:`;
  let redis: Redis;
  let leases: RedisLeases;

  beforeAll(() => {
    redis = connectRedis({ kind: 'standalone', url: infra('REDIS_URL') });
    leases = createRedisLeases(redis, createRedisStoreBase(redis).run);
  });

  afterAll(async () => {
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  });

  it('should give a free key to the first holder only, and its life to the key', async () => {
    const key = `${prefix}take`;
    expect(await leases.acquire(key, 'a', 10_000)).toBe(true);
    expect(await leases.acquire(key, 'b', 10_000)).toBe(false);
    expect(await redis.get(key)).toBe('a');
    expect(await redis.pttl(key)).toBeGreaterThan(9_000);
  });

  it('should extend the lease for its holder, and for nobody else', async () => {
    const key = `${prefix}extend`;
    await leases.acquire(key, 'a', 2_000);
    expect(await leases.acquire(key, 'a', 60_000)).toBe(true);
    expect(await redis.pttl(key)).toBeGreaterThan(50_000);
    expect(await leases.acquire(key, 'b', 120_000)).toBe(false);
    expect(await redis.pttl(key)).toBeLessThanOrEqual(60_000);
  });

  it('should let only the holder release, so a holder whose lease ran out leaves the next holder alone', async () => {
    const key = `${prefix}release`;
    await leases.acquire(key, 'a', 50);
    await sleep(120);
    expect(await leases.acquire(key, 'b', 10_000)).toBe(true);
    expect(await leases.release(key, 'a')).toBe(false);
    expect(await redis.get(key)).toBe('b');
    expect(await leases.release(key, 'b')).toBe(true);
    expect(await redis.exists(key)).toBe(0);
    expect(await leases.release(key, 'b')).toBe(false);
  });

  it('should give scripts the same test of the holder, in one step with their own writes', async () => {
    const key = `${prefix}script`;
    await leases.acquire(key, 'a', 10_000);
    const script = `if not (${holdsLua('KEYS[1]', 'ARGV[1]')}) then return -1 end return ${releaseIfHeldLua('KEYS[1]', 'ARGV[1]')}`;
    expect(await redis.eval(script, 1, key, 'b')).toBe(-1);
    expect(await redis.eval(script, 1, key, 'a')).toBe(1);
    expect(await redis.exists(key)).toBe(0);
  });
});
