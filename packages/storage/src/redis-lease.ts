import type { Cluster, Redis } from 'ioredis';
import type { RedisRun } from './redis-store-base.js';

/**
 * Lua, true while `key` holds `token`: the test every token-held lease makes before it touches
 * what the lease guards. For scripts that do more in the same atomic step (complete a claim,
 * write under the lease); `key` and `token` are Lua expressions such as `KEYS[2]`, `ARGV[1]`.
 */
export const holdsLua = (key: string, token: string): string => `redis.call('GET', ${key}) == ${token}`;

/** Lua, 1 when it deleted `key` because `key` still held `token`, else 0. */
export const releaseIfHeldLua = (key: string, token: string): string => `(${holdsLua(key, token)} and redis.call('DEL', ${key}) or 0)`;

// KEYS[1] = the lease, ARGV[1] = the holder's token, ARGV[2] = its life in ms.
const ACQUIRE = `
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if held then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;
const RELEASE = `return ${releaseIfHeldLua('KEYS[1]', 'ARGV[1]')}`;

interface LeaseCommands {
  platformLeaseAcquire(key: string, token: string, ttlMs: number): Promise<number>;
  platformLeaseRelease(key: string, token: string): Promise<number>;
}

/**
 * Leases held by a token in one Redis key (`SET key token PX ttl`): a holder that dies frees the
 * key when its life runs out, and only the holder's token extends or deletes it, so a holder
 * whose lease ran out cannot drop the next holder's.
 */
export interface RedisLeases {
  /** Takes `key` for `ttlMs` when nobody holds it, or extends it by `ttlMs` when `token` holds it; false when another token does. */
  acquire(key: string, token: string, ttlMs: number): Promise<boolean>;
  /** Deletes `key` when it still holds `token`; false when it did not (expired, or another holder's now). */
  release(key: string, token: string): Promise<boolean>;
}

/** Token-held leases on `redis`, each call through `run` (a store's error mapping); scripts sent by EVALSHA. */
export function createRedisLeases(connection: Redis | Cluster, run: RedisRun): RedisLeases {
  connection.defineCommand('platformLeaseAcquire', { numberOfKeys: 1, lua: ACQUIRE });
  connection.defineCommand('platformLeaseRelease', { numberOfKeys: 1, lua: RELEASE });
  const redis = connection as (Redis | Cluster) & LeaseCommands;
  return {
    acquire: async (key, token, ttlMs) => (await run(() => redis.platformLeaseAcquire(key, token, ttlMs))) === 1,
    release: async (key, token) => (await run(() => redis.platformLeaseRelease(key, token))) === 1,
  };
}
