import type { Cluster, Redis } from 'ioredis';
import { createRedisLeases, holdsLua, type RedisRun } from '@sp/storage';
import type { SchemaVersionInfo } from '@sp/graphs';
import { infoOf, type AnnouncementLog, type SchemaHistory, type SchemaVersions, type StoredSchemaVersion } from './schema-versions.js';

/**
 * The history's keys. `graph:schema` is the current schema, as the specification names it; the
 * others carry the hash tag `{graph:schema}`, so on a Redis Cluster they hash to the same slot as
 * `graph:schema` itself and one script can change them all at once.
 */
export const SCHEMA_HISTORY_KEYS: HistoryKeys & { current: string; announcer: string } = {
  current: 'graph:schema',
  /**
   * Hash: `last`, the highest version number ever given (never lowered, so numbers are never
   * reused); `announced`, the highest whose SchemaPublishedEvent was sent.
   */
  state: '{graph:schema}:state',
  /** The announcer's lease (schema-announcer.ts): the token of the replica sending the events. */
  announcer: '{graph:schema}:announcer',
  /** Sorted set of the versions kept, scored by number. */
  order: '{graph:schema}:versions',
  /** Hashes by version number: metadata (JSON), SDL, change report (JSON). */
  info: '{graph:schema}:info',
  sdl: '{graph:schema}:sdl',
  reports: '{graph:schema}:reports',
};

/** The keys of one schema history (the registry's own, or a subgraph's: federation/redis-federation-store.ts). */
export interface HistoryKeys {
  /** Hash: `last`, the highest version number ever given. */
  state: string;
  /** Sorted set of the versions kept, scored by number. */
  order: string;
  /** Hashes by version number: metadata (JSON), SDL, change report (JSON). */
  info: string;
  sdl: string;
  reports: string;
}

/**
 * Lua: `append_version(state, order, hashes, values, n, keep)` records version `n` as the last
 * one, in `order`, and in each hash of `hashes` with the value at the same place of `values`, then
 * drops the oldest versions beyond `keep` from `order` and every one of `hashes`. Scripts that
 * append versions (this file's and the federation's) include it, so history is kept one way.
 */
export const APPEND_VERSION_LUA = `
local function append_version(state, order, hashes, values, n, keep)
  redis.call('HSET', state, 'last', n)
  redis.call('ZADD', order, n, n)
  for i, hash in ipairs(hashes) do redis.call('HSET', hash, n, values[i]) end
  local excess = redis.call('ZCARD', order) - keep
  if excess > 0 then
    local dropped = redis.call('ZRANGE', order, 0, excess - 1)
    redis.call('ZREMRANGEBYRANK', order, 0, excess - 1)
    for _, version in ipairs(dropped) do
      for _, hash in ipairs(hashes) do redis.call('HDEL', hash, version) end
    end
  end
end
-- Before entry last + 1 of an announcement log is appended (state: its hash): the first append
-- records every earlier entry as announced (they were, before this was kept); with event_pending
-- '0' (no event to send: no broker, or an entry that has none) the new one counts as announced
-- too, unless an earlier one is still pending.
local function note_announcement(state, last, event_pending)
  redis.call('HSETNX', state, 'announced', last)
  if event_pending == '0' and tonumber(redis.call('HGET', state, 'announced')) == last then redis.call('HSET', state, 'announced', last + 1) end
end
`;

const KEYS = [SCHEMA_HISTORY_KEYS.current, SCHEMA_HISTORY_KEYS.state, SCHEMA_HISTORY_KEYS.order, SCHEMA_HISTORY_KEYS.info, SCHEMA_HISTORY_KEYS.sdl, SCHEMA_HISTORY_KEYS.reports];

/**
 * Appends version ARGV[1] + 1 when the last number is still ARGV[1] (compare and set): the
 * current schema, the version's records, then the oldest versions beyond ARGV[5] dropped; ARGV[6]
 * '1' when its event is pending (note_announcement). Returns the new number, or 0 when another
 * publish came first.
 */
const APPEND = `${APPEND_VERSION_LUA}
local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '0')
if last ~= tonumber(ARGV[1]) then return 0 end
note_announcement(KEYS[2], last, ARGV[6])
local n = last + 1
redis.call('SET', KEYS[1], ARGV[2])
append_version(KEYS[2], KEYS[3], {KEYS[4], KEYS[5], KEYS[6]}, {ARGV[3], ARGV[2], ARGV[4]}, n, tonumber(ARGV[5]))
return n
`;

/**
 * Moves `announced` (KEYS[1]: the state hash) from ARGV[2] to ARGV[3] while the lease KEYS[2]
 * holds ARGV[1]: a replica whose lease ran out cannot move it back or past another's.
 */
const MARK_ANNOUNCED = `
if not (${holdsLua('KEYS[2]', 'ARGV[1]')}) then return 0 end
local announced = redis.call('HGET', KEYS[1], 'announced') or redis.call('HGET', KEYS[1], 'last') or '0'
if tonumber(announced) ~= tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'announced', ARGV[3])
return 1
`;

/** The announcement log of a history whose state hash is `state` (`last`, `announced`), its announcer's lease in `lease` (the same hash slot). */
export function createRedisAnnouncementLog(redis: Redis | Cluster, run: RedisRun, state: string, lease: string): AnnouncementLog {
  const leases = createRedisLeases(redis, run);
  return {
    async announcement() {
      const [announced, last] = await run(() => redis.hmget(state, 'announced', 'last'));
      return { announced: Number(announced ?? last ?? 0), last: Number(last ?? 0) };
    },
    async markAnnounced(token, from, to) {
      return (await run(() => redis.eval(MARK_ANNOUNCED, 2, state, lease, token, String(from), String(to)))) === 1;
    },
    leaseAnnouncer: (token, ttlMs) => leases.acquire(lease, token, ttlMs),
    async releaseAnnouncer(token) {
      await leases.release(lease, token);
    },
  };
}

const parseInfo = (json: string): SchemaVersionInfo => JSON.parse(json) as SchemaVersionInfo;

/** A schema history on Redis as it is read; `current`: the key of the schema stored before versions existed (version 0). */
export function createRedisSchemaHistory(redis: Redis | Cluster, run: RedisRun, keys: HistoryKeys, current?: string): SchemaHistory {
  return {
    async latest() {
      const last = Number((await run(() => redis.hget(keys.state, 'last'))) ?? 0);
      if (last === 0 && current === undefined) return { version: 0 };
      const sdl = await run(() => (last === 0 ? redis.get(current!) : redis.hget(keys.sdl, String(last))));
      return sdl === null ? { version: last } : { version: last, sdl };
    },
    async list(before, limit) {
      const max = before === undefined ? '+inf' : `(${before}`;
      const numbers = await run(() => redis.zrevrangebyscore(keys.order, max, '-inf', 'LIMIT', 0, limit));
      if (numbers.length === 0) return [];
      const infos = await run(() => redis.hmget(keys.info, ...numbers));
      return infos.flatMap((json) => (json === null ? [] : [parseInfo(json)]));
    },
    async get(version) {
      const field = String(version);
      const [info, sdl, report] = await Promise.all([run(() => redis.hget(keys.info, field)), run(() => redis.hget(keys.sdl, field)), run(() => redis.hget(keys.reports, field))]);
      if (info === null || sdl === null || report === null) return undefined;
      return { ...parseInfo(info), sdl, report: JSON.parse(report) as StoredSchemaVersion['report'] };
    },
  };
}

/** The registry's own schema history on Redis (standalone, Sentinel or Cluster), beside `graph:schema`. */
export function createRedisSchemaVersions(redis: Redis | Cluster, run: RedisRun): SchemaVersions {
  return {
    ...createRedisSchemaHistory(redis, run, SCHEMA_HISTORY_KEYS, SCHEMA_HISTORY_KEYS.current),
    ...createRedisAnnouncementLog(redis, run, SCHEMA_HISTORY_KEYS.state, SCHEMA_HISTORY_KEYS.announcer),
    async append(expected, entry, keep, eventPending) {
      const args = [String(expected), entry.sdl, JSON.stringify(infoOf(entry)), JSON.stringify(entry.report), String(keep), eventPending ? '1' : '0'];
      const appended = await run(() => redis.eval(APPEND, KEYS.length, ...KEYS, ...args));
      return appended !== 0;
    },
  };
}
