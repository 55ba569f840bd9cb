import type { Cluster, Redis } from 'ioredis';
import type { RedisRun, SchemaVersionInfo } from '@sp/platform';
import { infoOf, type SchemaVersions, type StoredSchemaVersion } from './schema-versions.js';

/**
 * The history's keys. `graph:schema` is the current schema, as the specification names it; the
 * others carry the hash tag `{graph:schema}`, so on a Redis Cluster they hash to the same slot as
 * `graph:schema` itself and one script can change them all at once.
 */
export const SCHEMA_HISTORY_KEYS = {
  current: 'graph:schema',
  /** Hash: `last`, the highest version number ever given (never lowered, so numbers are never reused). */
  state: '{graph:schema}:state',
  /** Sorted set of the versions kept, scored by number. */
  order: '{graph:schema}:versions',
  /** Hashes by version number: metadata (JSON), SDL, change report (JSON). */
  info: '{graph:schema}:info',
  sdl: '{graph:schema}:sdl',
  reports: '{graph:schema}:reports',
} as const;

const KEYS = [SCHEMA_HISTORY_KEYS.current, SCHEMA_HISTORY_KEYS.state, SCHEMA_HISTORY_KEYS.order, SCHEMA_HISTORY_KEYS.info, SCHEMA_HISTORY_KEYS.sdl, SCHEMA_HISTORY_KEYS.reports];

/**
 * Appends version ARGV[1] + 1 when the last number is still ARGV[1] (compare and set): the
 * current schema, the version's records, then the oldest versions beyond ARGV[5] dropped.
 * Returns the new number, or 0 when another publish came first.
 */
const APPEND = `
local last = tonumber(redis.call('HGET', KEYS[2], 'last') or '0')
if last ~= tonumber(ARGV[1]) then return 0 end
local n = last + 1
redis.call('SET', KEYS[1], ARGV[2])
redis.call('HSET', KEYS[2], 'last', n)
redis.call('ZADD', KEYS[3], n, n)
redis.call('HSET', KEYS[4], n, ARGV[3])
redis.call('HSET', KEYS[5], n, ARGV[2])
redis.call('HSET', KEYS[6], n, ARGV[4])
local excess = redis.call('ZCARD', KEYS[3]) - tonumber(ARGV[5])
if excess > 0 then
  local dropped = redis.call('ZRANGE', KEYS[3], 0, excess - 1)
  redis.call('ZREMRANGEBYRANK', KEYS[3], 0, excess - 1)
  for _, version in ipairs(dropped) do
    redis.call('HDEL', KEYS[4], version)
    redis.call('HDEL', KEYS[5], version)
    redis.call('HDEL', KEYS[6], version)
  end
end
return n
`;

const parseInfo = (json: string): SchemaVersionInfo => JSON.parse(json) as SchemaVersionInfo;

/** The schema history on Redis (standalone, Sentinel or Cluster), beside `graph:schema`. */
export function createRedisSchemaVersions(redis: Redis | Cluster, run: RedisRun): SchemaVersions {
  const K = SCHEMA_HISTORY_KEYS;
  return {
    async latest() {
      const last = Number((await run(() => redis.hget(K.state, 'last'))) ?? 0);
      const sdl = await run(() => (last === 0 ? redis.get(K.current) : redis.hget(K.sdl, String(last))));
      return sdl === null ? { version: last } : { version: last, sdl };
    },
    async append(expected, entry, keep) {
      const args = [String(expected), entry.sdl, JSON.stringify(infoOf(entry)), JSON.stringify(entry.report), String(keep)];
      const appended = await run(() => redis.eval(APPEND, KEYS.length, ...KEYS, ...args));
      return appended !== 0;
    },
    async list(before, limit) {
      const max = before === undefined ? '+inf' : `(${before}`;
      const numbers = await run(() => redis.zrevrangebyscore(K.order, max, '-inf', 'LIMIT', 0, limit));
      if (numbers.length === 0) return [];
      const infos = await run(() => redis.hmget(K.info, ...numbers));
      return infos.flatMap((json) => (json === null ? [] : [parseInfo(json)]));
    },
    async get(version) {
      const field = String(version);
      const [info, sdl, report] = await Promise.all([run(() => redis.hget(K.info, field)), run(() => redis.hget(K.sdl, field)), run(() => redis.hget(K.reports, field))]);
      if (info === null || sdl === null || report === null) return undefined;
      return { ...parseInfo(info), sdl, report: JSON.parse(report) as StoredSchemaVersion['report'] };
    },
  };
}
