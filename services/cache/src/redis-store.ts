import type { Cluster, Redis } from 'ioredis';
import { createRedisStoreBase } from '@sp/storage';
import { counterOutOfRange, notACounter } from './counter.js';
import { decodeEntry, encodeEntry, HEADER_BYTES } from './entry-codec.js';
import { INCREMENT_SCRIPT } from './redis-increment-script.js';
import { REMOVE_IF_EQUALS_SCRIPT } from './redis-remove-if-equals-script.js';
import type { CacheStore, Entry } from './store.js';

/** The increment script's error replies are the caller's mistakes; other replies keep the base's 500. */
function scriptError(err: Error): Error | undefined {
  if (err.message.startsWith('NOTCOUNTER ')) return notACounter();
  if (err.message.startsWith('OUTOFRANGE ')) return counterOutOfRange();
  return undefined;
}

/** The commands ioredis' defineCommand adds for the scripts (the Buffer form keeps the binary header intact). */
interface ScriptCommands {
  cacheIncrementBuffer(key: string, delta: string, ttlMs: string, header: Buffer): Promise<[Buffer, Buffer]>;
  cacheRemoveIfEquals(key: string, value: Buffer): Promise<number>;
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
  const { run, check, close } = createRedisStoreBase(redis, { mapReplyError: scriptError });
  redis.defineCommand('cacheIncrement', { numberOfKeys: 1, lua: INCREMENT_SCRIPT });
  redis.defineCommand('cacheRemoveIfEquals', { numberOfKeys: 1, lua: REMOVE_IF_EQUALS_SCRIPT });
  const scripted = redis as (Redis | Cluster) & ScriptCommands;
  const expiryFor = (ttlMs: number): number => (ttlMs > 0 ? now() + ttlMs : 0);
  return {
    async get(key) {
      return decodeStored(await run(() => redis.getBuffer(keyPrefix + key)));
    },
    valueBytes(keys) {
      // STRLEN of each entry (header and value), pipelined like the reads: one round trip per node.
      return Promise.all(keys.map(async (key) => Math.max(0, (await run(() => redis.strlen(keyPrefix + key))) - HEADER_BYTES)));
    },
    async set(key, value, ttlMs) {
      const expiresAtUnixMs = expiryFor(ttlMs);
      const stored = encodeEntry(value, expiresAtUnixMs);
      await run(() => (ttlMs > 0 ? redis.set(keyPrefix + key, stored, 'PX', ttlMs) : redis.set(keyPrefix + key, stored)));
      return { value, expiresAtUnixMs };
    },
    async remove(key) {
      return (await run(() => redis.del(keyPrefix + key))) > 0;
    },
    async removeIfEquals(key, value) {
      return (await run(() => scripted.cacheRemoveIfEquals(keyPrefix + key, value))) > 0;
    },
    async increment(key, delta, ttlMs) {
      const header = encodeEntry(Buffer.alloc(0), expiryFor(ttlMs));
      const [text, storedHeader] = await run(() => scripted.cacheIncrementBuffer(keyPrefix + key, String(delta), String(ttlMs), header));
      return { value: Number(text.toString('latin1')), expiresAtUnixMs: decodeEntry(storedHeader).expiresAtUnixMs };
    },
    async setIfAbsent(key, value, ttlMs) {
      const expiresAtUnixMs = expiryFor(ttlMs);
      const stored = encodeEntry(value, expiresAtUnixMs);
      // SET … NX GET answers the live value it kept, or nil when it stored ours: one atomic step.
      const previous = await run(() =>
        ttlMs > 0 ? redis.setBuffer(keyPrefix + key, stored, 'PX', ttlMs, 'NX', 'GET') : redis.setBuffer(keyPrefix + key, stored, 'NX', 'GET'),
      );
      if (previous === null) return { stored: true, entry: { value, expiresAtUnixMs } };
      return { stored: false, entry: decodeStored(previous) ?? { value: previous, expiresAtUnixMs: 0 } };
    },
    size: () => undefined,
    check,
    close,
  };
}
