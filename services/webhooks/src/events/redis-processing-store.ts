import { randomUUID } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';
import type { Logger } from '@sp/observability';
import { createRedisLeases, createRedisStoreBase, logRedisConnectionState, releaseIfHeldLua } from '@sp/storage';
import type { ClaimOutcome, ProcessingStore, ObjectVersion } from './processing-store.js';
import { despiteFailover } from './despite-failover.js';

// KEYS[1] = done marker, KEYS[2] = claim; both carry the event id in a hash tag, so they share a
// cluster slot and one script may touch both. Claim and completion also say how many replicas the
// primary has, so the caller waits for one of them to have the write only when there is one.
const REPLICAS = `tonumber(string.match(redis.call('INFO', 'replication'), 'connected_slaves:(%d+)') or '0')`;
const CLAIM = `
if redis.call('EXISTS', KEYS[1]) == 1 then return {'done', 0} end
if redis.call('SET', KEYS[2], ARGV[1], 'NX', 'PX', ARGV[2]) then return {'claimed', ${REPLICAS}} end
return {'busy', 0}`;
const COMPLETE = `
redis.call('SET', KEYS[1], '1', 'PX', ARGV[2])
local released = ${releaseIfHeldLua('KEYS[2]', 'ARGV[1]')}
return ${REPLICAS}`;
/** How long a claim or completion waits for a replica to acknowledge it; on a healthy set, well under a millisecond. */
const REPLICATION_WAIT_MS = 1000;
/** How long a claim whose replication could not be confirmed is retried every 50 ms to be dropped (across a failover); then every 500 ms for the rest of its lease. */
const CLAIM_RELEASE_MS = 8000;

type Connection = Redis | Cluster;

/**
 * WAIT on the connection to the primary of `key` (a keyless command alone would go to any node of
 * a Cluster): resolves once a replica has every write made so far on it, so a failover right after
 * cannot lose them. A primary that dies first rejects (503); a replica too slow to acknowledge
 * within the bound is let pass (the write is as safe as without WAIT).
 */
async function replicated(redis: Connection, key: string): Promise<void> {
  const results = await redis.pipeline().exists(key).call('WAIT', '1', String(REPLICATION_WAIT_MS)).exec();
  const failure = results?.find(([err]) => err !== null)?.[0];
  if (failure) throw failure;
}

// KEYS[1] = version; ARGV = created, '1' when deleted, retention. Never lowers a version and keeps a
// tombstone: the comparison and the write are one step, so a write of an older state (a holder whose
// object claim ran out, a late retry) cannot undo a newer one.
const RECORD_VERSION = `
local held = redis.call('GET', KEYS[1])
if held then
  local created, rest = string.match(held, '^(%d+)(.*)$')
  if created and (rest == ':deleted' and ARGV[2] ~= '1' or tonumber(ARGV[1]) < tonumber(created)) then return 0 end
end
redis.call('SET', KEYS[1], ARGV[2] == '1' and (ARGV[1] .. ':deleted') or ARGV[1], 'PX', ARGV[3])
return 1`;

function parseVersion(value: string | null): ObjectVersion | null {
  const match = value === null ? null : /^(\d+)(:deleted)?$/.exec(value);
  return match === null ? null : { created: Number(match[1]), deleted: match[2] !== undefined };
}

interface ProcessingCommands {
  processingClaim(done: string, claim: string, token: string, leaseMs: number): Promise<[ClaimOutcome['state'], number]>;
  processingComplete(done: string, claim: string, token: string, retentionMs: number): Promise<number>;
  processingRecordVersion(version: string, created: number, deleted: '1' | '0', retentionMs: number): Promise<number>;
}

/** The scripts as commands of the connection: ioredis sends EVALSHA, and the script body only once. */
function defineCommands(redis: Connection): Connection & ProcessingCommands {
  redis.defineCommand('processingClaim', { numberOfKeys: 2, lua: CLAIM });
  redis.defineCommand('processingComplete', { numberOfKeys: 2, lua: COMPLETE });
  redis.defineCommand('processingRecordVersion', { numberOfKeys: 1, lua: RECORD_VERSION });
  return redis as Connection & ProcessingCommands;
}

/**
 * The de-duplication store on Redis (standalone, Sentinel or Cluster: both keys of an event share a
 * hash tag, so a script may touch both), shared by all replicas: `{prefix}{<eventId>}:done` marks a
 * processed event (kept `retentionMs`), `{prefix}{<eventId>}:claim` is the in-flight claim (SET NX
 * PX, so a crashed replica's claim expires by itself). Claim and completion are Lua scripts, atomic.
 * `{prefix}{<objectKey>}:version` is an object's applied version, `<created>` or `<created>:deleted`.
 */
export function createRedisProcessingStore(connection: Connection, logger: Logger, prefix = 'webhooks:stripe-event:'): ProcessingStore {
  logRedisConnectionState(connection, logger, 'store (redis)');
  const redis = defineCommands(connection);
  const keys = (eventId: string): [string, string] => [`${prefix}{${eventId}}:done`, `${prefix}{${eventId}}:claim`];
  const { run, check, close } = createRedisStoreBase(connection, { dependency: 'store' });
  const leases = createRedisLeases(connection, run);
  const versionKey = (objectKey: string): string => `${prefix}{${objectKey}}:version`;
  const release = (eventId: string, token: string): Promise<boolean> => leases.release(keys(eventId)[1], token);
  /**
   * A claim call that failed may still hold the event: Redis ran the script and its reply was lost
   * (the connection cut, or no reply within the socket timeout on a loaded server), or the claim
   * reached the replica now promoted. Nobody holds its token, so it would refuse every redelivery
   * for the whole lease: drop it (compare-and-delete on the token, a no-op when it never landed),
   * however long the outage lasts. In the background, so the delivery still fails fast with 503.
   */
  const releaseAfterFailedClaim = (eventId: string, token: string, leaseMs: number, err: unknown): never => {
    const options = { waitMs: CLAIM_RELEASE_MS, pollMs: 50, backgroundMs: leaseMs - CLAIM_RELEASE_MS };
    void despiteFailover(() => release(eventId, token).then(() => undefined), options).catch(() => undefined);
    throw err;
  };
  return {
    name: 'redis',
    async claim(eventId, leaseMs) {
      const token = randomUUID();
      const [state, replicas] = await run(() => redis.processingClaim(...keys(eventId), token, leaseMs)).catch((err: unknown) => releaseAfterFailedClaim(eventId, token, leaseMs, err));
      if (state !== 'claimed') return { state };
      // Work starts only on a claim a promoted replica would still have: else a redelivery could claim the event again there.
      if (replicas > 0) await run(() => replicated(redis, keys(eventId)[1])).catch((err: unknown) => releaseAfterFailedClaim(eventId, token, leaseMs, err));
      return { state, token };
    },
    async complete(eventId, token, retentionMs) {
      const replicas = await run(() => redis.processingComplete(...keys(eventId), token, retentionMs));
      if (replicas > 0) await run(() => replicated(redis, keys(eventId)[0]));
    },
    async release(eventId, token) {
      await release(eventId, token);
    },
    async readVersion(objectKey) {
      return parseVersion(await run(() => redis.get(versionKey(objectKey))));
    },
    async recordVersion(objectKey, version, retentionMs) {
      await run(() => redis.processingRecordVersion(versionKey(objectKey), version.created, version.deleted ? '1' : '0', retentionMs));
    },
    check,
    close,
  };
}
