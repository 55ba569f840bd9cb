import { once } from 'node:events';
import type { Redis } from 'ioredis';
import { AppError, logRedisConnectionState, unavailable, type Logger } from '@sp/platform';
import type { GraphStore } from './graph-store.js';
import { isGraphName } from './names.js';

/** Records exactly as the specification names them: `graph:{name}` (URL text) and `graph:schema`. */
const PREFIX = 'graph:';
const SCHEMA_KEY = `${PREFIX}schema`;
const SCAN_COUNT = 1000;
const MGET_BATCH = 500;
/** How long a command waits for a connection that is being opened (at start, or a reconnect in progress). */
const CONNECTING_WAIT_MS = 1000;

type Run = <T>(command: () => Promise<T>) => Promise<T>;

/** A Redis error reply is a bug or misuse (500); anything else (refused, closed, timed out) means Redis is unreachable (503). */
function toStoreError(err: unknown): AppError {
  if (err instanceof Error && err.name === 'ReplyError') return new AppError(500, 'redis_error', err.message, { cause: err });
  return unavailable('redis', err);
}

/**
 * Runs commands. While a connection attempt is in progress a command waits for it (briefly, all
 * waiters sharing one wait), so the first requests after a start do not fail; while Redis is down
 * between attempts it fails at once (no offline queue). Errors become 503 or 500.
 */
function createRunner(redis: Redis): Run {
  let opening: Promise<unknown> | undefined;
  const connected = (): Promise<unknown> | undefined => {
    if (redis.status !== 'connecting' && redis.status !== 'connect') return undefined;
    opening ??= once(redis, 'ready', { signal: AbortSignal.timeout(CONNECTING_WAIT_MS) }).finally(() => {
      opening = undefined;
    });
    return opening;
  };
  const fail = (err: unknown): never => {
    throw toStoreError(err);
  };
  // Plain promise chaining: this runs once per request, so no extra async frame.
  return <T>(command: () => Promise<T>): Promise<T> => (connected()?.then(command) ?? command()).catch(fail);
}

/** Keys of every graph record, by SCAN (never KEYS, which blocks Redis), without duplicates or foreign keys. */
async function scanGraphKeys(redis: Redis, run: Run): Promise<string[]> {
  const keys = new Set<string>();
  let cursor = '0';
  do {
    const [next, batch] = await run(() => redis.scan(cursor, 'MATCH', `${PREFIX}*`, 'COUNT', SCAN_COUNT));
    cursor = next;
    for (const key of batch) if (isGraphName(key.slice(PREFIX.length))) keys.add(key);
  } while (cursor !== '0');
  return [...keys].sort();
}

async function readGraphs(redis: Redis, run: Run, keys: readonly string[]): Promise<Map<string, string>> {
  const graphs = new Map<string, string>();
  for (let start = 0; start < keys.length; start += MGET_BATCH) {
    const batch = keys.slice(start, start + MGET_BATCH);
    const values = await run(() => redis.mget(...batch));
    batch.forEach((key, index) => {
      const value = values[index];
      if (typeof value === 'string') graphs.set(key.slice(PREFIX.length), value);
    });
  }
  return graphs;
}

const orUndefined = (value: string | null): string | undefined => value ?? undefined;

/**
 * The graph store on Redis (a client made with `connectRedis`: a hung connection is dropped after
 * 1 s, and its commands answer 503); several registry replicas share one view.
 */
export function createRedisGraphStore(redis: Redis, logger: Logger): GraphStore {
  logRedisConnectionState(redis, logger);
  const run = createRunner(redis);
  return {
    name: 'redis',
    getUrl: (name) => run(() => redis.get(PREFIX + name)).then(orUndefined),
    async setUrl(name, url) {
      await run(() => redis.set(PREFIX + name, url));
    },
    async deleteUrl(name) {
      return (await run(() => redis.del(PREFIX + name))) > 0;
    },
    async listUrls() {
      return readGraphs(redis, run, await scanGraphKeys(redis, run));
    },
    async countGraphs() {
      return (await scanGraphKeys(redis, run)).length;
    },
    getSchema: () => run(() => redis.get(SCHEMA_KEY)).then(orUndefined),
    async setSchema(sdl) {
      await run(() => redis.set(SCHEMA_KEY, sdl));
    },
    schemaBytes: () => run(() => redis.strlen(SCHEMA_KEY)),
    async check() {
      await run(() => redis.ping());
    },
    async close() {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
