import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import { createRedisStoreBase, logRedisConnectionState, type Logger } from '@sp/platform';
import type { ClaimOutcome, DedupStore, ObjectVersion } from './dedup-store.js';

// KEYS[1] = done marker, KEYS[2] = claim; both carry the event id in a hash tag, so they share a
// cluster slot and one script may touch both.
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 1 then return 'done' end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return 'claimed' end
return 'busy'`;
const COMPLETE = `
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`;
const RELEASE = `
if redis.call('GET', KEYS[2]) == ARGV[1] then return redis.call('DEL', KEYS[2]) end
return 0`;

type Connection = Redis | Cluster;

function parseVersion(value: string | null): ObjectVersion | null {
  const match = value === null ? null : /^(\d+)(:deleted)?$/.exec(value);
  return match === null ? null : { created: Number(match[1]), deleted: match[2] !== undefined };
}

interface DedupCommands {
  dedupClaim(done: string, claim: string, token: string, leaseMs: number): Promise<string>;
  dedupComplete(done: string, claim: string, token: string, retentionMs: number): Promise<number>;
  dedupRelease(done: string, claim: string, token: string): Promise<number>;
}

/** The scripts as commands of the connection: ioredis sends EVALSHA, and the script body only once. */
function defineCommands(redis: Connection): Connection & DedupCommands {
  redis.defineCommand('dedupClaim', { numberOfKeys: 2, lua: CLAIM });
  redis.defineCommand('dedupComplete', { numberOfKeys: 2, lua: COMPLETE });
  redis.defineCommand('dedupRelease', { numberOfKeys: 2, lua: RELEASE });
  return redis as Connection & DedupCommands;
}

/**
 * The de-duplication store on Redis (standalone, Sentinel or Cluster: both keys of an event share a
 * hash tag, so a script may touch both), shared by all replicas: `{prefix}{<eventId>}:done` marks a
 * processed event (kept `retentionMs`), `{prefix}{<eventId>}:claim` is the in-flight claim (SET NX
 * PX, so a crashed replica's claim expires by itself). Claim and completion are Lua scripts, atomic.
 * `{prefix}{<objectKey>}:version` is an object's applied version, `<created>` or `<created>:deleted`.
 */
export function createRedisDedupStore(connection: Connection, logger: Logger, prefix = 'webhooks:stripe-event:'): DedupStore {
  logRedisConnectionState(connection, logger, 'store (redis)');
  const redis = defineCommands(connection);
  const keys = (eventId: string): [string, string] => [`${prefix}{${eventId}}:done`, `${prefix}{${eventId}}:claim`];
  const { run, check, close } = createRedisStoreBase(connection, { dependency: 'store' });
  const versionKey = (objectKey: string): string => `${prefix}{${objectKey}}:version`;
  return {
    name: 'redis',
    async claim(eventId, leaseMs) {
      const token = randomUUID();
      const state = (await run(() => redis.dedupClaim(...keys(eventId), token, leaseMs))) as ClaimOutcome['state'];
      return state === 'claimed' ? { state, token } : { state };
    },
    async complete(eventId, token, retentionMs) {
      await run(() => redis.dedupComplete(...keys(eventId), token, retentionMs));
    },
    async release(eventId, token) {
      await run(() => redis.dedupRelease(...keys(eventId), token));
    },
    async readVersion(objectKey) {
      return parseVersion(await run(() => redis.get(versionKey(objectKey))));
    },
    async recordVersion(objectKey, version, retentionMs) {
      const value = version.deleted ? `${version.created}:deleted` : String(version.created);
      await run(() => redis.set(versionKey(objectKey), value, 'PX', retentionMs));
    },
    check,
    close,
  };
}
