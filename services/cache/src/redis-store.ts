import { once } from 'node:events';
import type { Cluster, Redis } from 'ioredis';
import { AppError, unavailable } from '@sp/platform';
import { counterOutOfRange, notACounter } from './counter.js';
import { decodeEntry, encodeEntry, HEADER_BYTES } from './entry-codec.js';
import { INCREMENT_SCRIPT } from './redis-increment-script.js';
import type { CacheStore, Entry } from './store.js';

/** The script's errors are the caller's; another Redis error reply is a bug or misuse; anything else (refused, closed, timed out) means Redis is unreachable. */
function toAppError(err: unknown): Error {
  if (err instanceof Error && err.name === 'ReplyError') {
    if (err.message.startsWith('NOTCOUNTER ')) return notACounter();
    if (err.message.startsWith('OUTOFRANGE ')) return counterOutOfRange();
    return new AppError(500, 'redis_error', err.message, { cause: err });
  }
  return unavailable('redis', err);
}

async function guard<T>(operation: Promise<T>): Promise<T> {
  try {
    return await operation;
  } catch (err) {
    throw toAppError(err);
  }
}

/** The command ioredis' defineCommand adds for INCREMENT_SCRIPT (its Buffer form keeps the binary header intact). */
interface IncrementCommand {
  cacheIncrementBuffer(key: string, delta: string, ttlMs: string, header: Buffer): Promise<[Buffer, Buffer]>;
}

/** A stored entry; anything shorter than the header was not written by this store and reads as absent. */
const decodeStored = (stored: Buffer | null): Entry | undefined => (stored === null || stored.length < HEADER_BYTES ? undefined : decodeEntry(stored));

/**
 * Cache entries in Redis under `keyPrefix`. Expiry is Redis' own (SET … PX), so several cache
 * replicas share one view; capacity and eviction follow Redis' maxmemory policy. Needs Redis 7.0
 * or newer (SET with both NX and GET).
 */
export function createRedisStore(redis: Redis | Cluster, keyPrefix: string): CacheStore {
  const now = Date.now;
  redis.defineCommand('cacheIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  const scripted = redis as (Redis | Cluster) & IncrementCommand;
  const expiryFor = (ttlMs: number): number => (ttlMs > 0 ? now() + ttlMs : 0);
  return {
    async get(key) {
      return decodeStored(await guard(redis.getBuffer(keyPrefix + key)));
    },
    async set(key, value, ttlMs) {
      const expiresAtUnixMs = expiryFor(ttlMs);
      const stored = encodeEntry(value, expiresAtUnixMs);
      await guard(ttlMs > 0 ? redis.set(keyPrefix + key, stored, 'PX', ttlMs) : redis.set(keyPrefix + key, stored));
      return { value, expiresAtUnixMs };
    },
    async remove(key) {
      return (await guard(redis.del(keyPrefix + key))) > 0;
    },
    async increment(key, delta, ttlMs) {
      const header = encodeEntry(Buffer.alloc(0), expiryFor(ttlMs));
      const [text, storedHeader] = await guard(scripted.cacheIncrementBuffer(keyPrefix + key, String(delta), String(ttlMs), header));
      return { value: Number(text.toString('latin1')), expiresAtUnixMs: decodeEntry(storedHeader).expiresAtUnixMs };
    },
    async setIfAbsent(key, value, ttlMs) {
      const expiresAtUnixMs = expiryFor(ttlMs);
      const stored = encodeEntry(value, expiresAtUnixMs);
      // SET … NX GET answers the live value it kept, or nil when it stored ours: one atomic step.
      const previous = await guard(
        ttlMs > 0 ? redis.setBuffer(keyPrefix + key, stored, 'PX', ttlMs, 'NX', 'GET') : redis.setBuffer(keyPrefix + key, stored, 'NX', 'GET'),
      );
      if (previous === null) return { stored: true, entry: { value, expiresAtUnixMs } };
      return { stored: false, entry: decodeStored(previous) ?? { value: previous, expiresAtUnixMs: 0 } };
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
