import { Cluster, type Redis } from 'ioredis';
import type { Logger } from '@sp/observability';
import { createRedisStoreBase, logRedisConnectionState, type RedisRun } from '@sp/storage';
import { createRedisFederationStore } from '../federation/redis-federation-store.js';
import { LIST_PAGE_SIZE, type GraphStore } from './graph-store.js';
import { isGraphName } from './names.js';
import { createRedisSchemaVersions, SCHEMA_HISTORY_KEYS } from '../schemas/redis-schema-versions.js';

/**
 * Records exactly as the specification names them: `graph:{name}` (URL text) and `graph:schema`;
 * the schema's history beside them under `{graph:schema}:…` (redis-schema-versions.ts).
 */
const PREFIX = 'graph:';
const SCHEMA_KEY = SCHEMA_HISTORY_KEYS.current;
const SCAN_COUNT = 1000;
/** SCAN over one server (never KEYS, which blocks Redis), adding graph record keys to `keys`. */
async function scanServer(server: Redis, run: RedisRun, keys: Set<string>): Promise<void> {
  let cursor = '0';
  do {
    const [next, batch] = await run(() => server.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', SCAN_COUNT));
    cursor = next;
    for (const key of batch) if (isGraphName(key.slice(PREFIX.length))) keys.add(key);
  } while (cursor !== '0');
}

/** Keys of every graph record, without duplicates or foreign keys; on a Cluster, from every primary. */
async function scanGraphKeys(redis: Redis | Cluster, run: RedisRun): Promise<Set<string>> {
  const keys = new Set<string>();
  const servers = redis instanceof Cluster ? redis.nodes('master') : [redis];
  for (const server of servers) await scanServer(server, run, keys);
  return keys;
}

/** The values of `keys`: one MGET on a single server; per key on a Cluster, where keys of one MGET must share a slot (auto-pipelining still sends them in one write per node). */
const readValues = (redis: Redis | Cluster, keys: string[]): Promise<Array<string | null>> =>
  redis instanceof Cluster ? Promise.all(keys.map((key) => redis.get(key))) : redis.mget(...keys);

/** The graphs of `keys`, names ascending, a page (one MGET) at a time; a key deleted meanwhile is left out. */
async function* readGraphs(redis: Redis | Cluster, run: RedisRun, keys: readonly string[]): AsyncGenerator<Map<string, string>> {
  for (let start = 0; start < keys.length; start += LIST_PAGE_SIZE) {
    const batch = keys.slice(start, start + LIST_PAGE_SIZE);
    const values = await run(() => readValues(redis, batch));
    const graphs = new Map<string, string>();
    batch.forEach((key, index) => {
      const value = values[index];
      if (typeof value === 'string') graphs.set(key.slice(PREFIX.length), value);
    });
    yield graphs;
  }
}

const orUndefined = (value: string | null): string | undefined => value ?? undefined;

/**
 * The graph store on Redis (a client made with `connectRedis`: a hung connection is dropped after
 * 1 s, and its commands answer 503); standalone, Sentinel or Cluster (the records are single keys,
 * so they spread over every primary); several registry replicas share one view.
 */
export function createRedisGraphStore(redis: Redis | Cluster, logger: Logger): GraphStore {
  logRedisConnectionState(redis, logger);
  const { run, check, close } = createRedisStoreBase(redis);
  return {
    name: 'redis',
    versions: createRedisSchemaVersions(redis, run),
    federation: createRedisFederationStore(redis, run),
    getUrl: (name) => run(() => redis.get(PREFIX + name)).then(orUndefined),
    async setUrl(name, url) {
      await run(() => redis.set(PREFIX + name, url));
    },
    async deleteUrl(name) {
      return (await run(() => redis.del(PREFIX + name))) > 0;
    },
    async *listUrls() {
      yield* readGraphs(redis, run, [...(await scanGraphKeys(redis, run))].sort());
    },
    async countGraphs() {
      return (await scanGraphKeys(redis, run)).size;
    },
    getSchema: () => run(() => redis.get(SCHEMA_KEY)).then(orUndefined),
    async setSchema(sdl) {
      await run(() => redis.set(SCHEMA_KEY, sdl));
    },
    schemaBytes: () => run(() => redis.strlen(SCHEMA_KEY)),
    check,
    close,
  };
}
