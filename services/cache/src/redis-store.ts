import { once } from 'node:events';
import type { Cluster, Redis } from 'ioredis';
import { AppError, unavailable } from '@sp/platform';
import { decodeEntry, encodeEntry, HEADER_BYTES } from './entry-codec.js';
import type { CacheStore } from './store.js';

/** A Redis error reply is a bug or misuse; anything else (refused, closed, timed out) means Redis is unreachable. */
function toAppError(err: unknown): AppError {
  if (err instanceof Error && err.name === 'ReplyError') return new AppError(500, 'redis_error', err.message, { cause: err });
  return unavailable('redis', err);
}

async function guard<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (err) {
    throw toAppError(err);
  }
}

/**
 * Cache entries in Redis under `keyPrefix`. Expiry is Redis' own (SET … PX), so several cache
 * replicas share one view; capacity and eviction follow Redis' maxmemory policy.
 */
export function createRedisStore(redis: Redis | Cluster, keyPrefix: string): CacheStore {
  const now = Date.now;
  return {
    async get(key) {
      const stored = await guard(redis.getBuffer(keyPrefix + key));
      return stored === null || stored.length < HEADER_BYTES ? undefined : decodeEntry(stored);
    },
    async set(key, value, ttlMs) {
      const expiresAtUnixMs = ttlMs > 0 ? now() + ttlMs : 0;
      const stored = encodeEntry(value, expiresAtUnixMs);
      await guard(ttlMs > 0 ? redis.set(keyPrefix + key, stored, 'PX', ttlMs) : redis.set(keyPrefix + key, stored));
      return { value, expiresAtUnixMs };
    },
    async remove(key) {
      return (await guard(redis.del(keyPrefix + key))) > 0;
    },
    size: () => undefined,
    async check() {
      // Right after start (or a reconnect) the connection may still be opening: give it a moment.
      if (redis.status !== 'ready') await guard(once(redis, 'ready', { signal: AbortSignal.timeout(1000) }));
      await guard(redis.ping());
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
