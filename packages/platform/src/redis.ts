import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { backoffDelay } from './backoff.js';
import type { Logger } from 'pino';

/**
 * Where Redis is, from one URL:
 *   redis://[user:password@]host:port[/db]   and rediss:// for TLS (standalone)
 *   redis+sentinel://[:password@]host:port[,host:port...]/masterName[/db]
 *   redis+cluster://[:password@]host:port[,host:port...]
 */
export type RedisTarget =
  | { kind: 'standalone'; url: string }
  | { kind: 'sentinel'; sentinels: Array<{ host: string; port: number }>; name: string; password?: string; db: number }
  | { kind: 'cluster'; nodes: Array<{ host: string; port: number }>; password?: string };

const MULTI_HOST = /^redis\+(sentinel|cluster):\/\/(?:([^@/]*)@)?([^/]+)(?:\/([^/]*)(?:\/(\d+))?)?$/;

function parseHosts(list: string, defaultPort: number): Array<{ host: string; port: number }> {
  return list.split(',').map((item) => {
    const match = /^([^:]+)(?::(\d+))?$/.exec(item.trim());
    if (!match) throw new Error(`invalid host "${item}"`);
    return { host: match[1]!, port: match[2] === undefined ? defaultPort : Number(match[2]) };
  });
}

function passwordOf(userInfo: string | undefined): string | undefined {
  if (userInfo === undefined || userInfo === '') return undefined;
  return decodeURIComponent(userInfo.includes(':') ? userInfo.slice(userInfo.indexOf(':') + 1) : userInfo);
}

const REDIS_SCHEME = /^(rediss?|redis\+sentinel|redis\+cluster):/;
const REDIS_URL_FORMS = 'must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...';

/** A redis:// or rediss:// URL, checked: one host, as WHATWG URLs (and ioredis) read it. */
function standaloneUrl(url: string): string {
  if (!URL.canParse(url)) throw new Error(REDIS_URL_FORMS);
  if (new URL(url).hostname === '') throw new Error('a redis:// or rediss:// URL must name a host');
  return url;
}

/** Parses a Redis URL; throws with a readable message when it is not one of the forms above. */
export function parseRedisUrl(url: string): RedisTarget {
  if (!REDIS_SCHEME.test(url)) throw new Error(REDIS_URL_FORMS);
  if (/^rediss?:/.test(url)) return { kind: 'standalone', url: standaloneUrl(url) };
  const match = MULTI_HOST.exec(url);
  if (!match) throw new Error(REDIS_URL_FORMS);
  const [, kind, userInfo, hosts, name, db] = match;
  const password = passwordOf(userInfo);
  if (kind === 'cluster') return { kind: 'cluster', nodes: parseHosts(hosts!, 6379), ...(password ? { password } : {}) };
  if (!name) throw new Error('a redis+sentinel URL must name the master: redis+sentinel://host:26379/mymaster');
  return { kind: 'sentinel', sentinels: parseHosts(hosts!, 26379), name, db: Number(db ?? 0), ...(password ? { password } : {}) };
}

/** Where a service keeps its shared state (STORE_URL): Redis, or this process' memory (local runs only). */
export type StoreConfig = { kind: 'redis'; url: string } | { kind: 'memory' };

/** Reads a STORE_URL: `memory://`, or a Redis URL as `parseRedisUrl` takes it; throws with what is wrong. */
export function parseStoreUrl(url: string): StoreConfig {
  if (/^memory:/.test(url)) return { kind: 'memory' };
  if (!REDIS_SCHEME.test(url)) throw new Error(`must be memory:// or a Redis URL (${REDIS_URL_FORMS})`);
  parseRedisUrl(url);
  return { kind: 'redis', url };
}

// ioredis counts attempts from 1: 100 ms, 200 ms, … up to 2 s.
const reconnectDelay = (attempt: number): number => backoffDelay(attempt + 1, 50, 2000);

/**
 * Connection settings that fail fast instead of queueing: while Redis is unreachable a command
 * rejects at once (no offline queue, no retry on another connection), and reconnection goes on in
 * the background forever, so the service recovers by itself when Redis returns (or, on Sentinel
 * and Cluster, when a replica has been promoted). A Redis that accepts but never answers (hung, or
 * a network partition) is caught by ioredis' `socketTimeout`: when no reply has come
 * `noReplyTimeoutMs` after a command was sent, the socket is destroyed, the waiting commands fail
 * and ioredis reconnects.
 */
const failFastRedisOptions = (noReplyTimeoutMs: number): RedisOptions => ({
  enableOfflineQueue: false,
  // Commands issued in the same tick share one write: concurrent calls cost fewer round trips.
  enableAutoPipelining: true,
  maxRetriesPerRequest: 0,
  connectTimeout: 2000,
  socketTimeout: noReplyTimeoutMs,
  retryStrategy: reconnectDelay,
});

/**
 * A client with the fail-fast settings whose hung connections are dropped after `noReplyTimeoutMs`:
 * the one way the services connect to Redis. A standalone target gives a plain `Redis`.
 */
export function connectRedis(target: Extract<RedisTarget, { kind: 'standalone' }>, noReplyTimeoutMs?: number): Redis;
export function connectRedis(target: RedisTarget, noReplyTimeoutMs?: number): Redis | Cluster;
export function connectRedis(target: RedisTarget, noReplyTimeoutMs = 1000): Redis | Cluster {
  const options = failFastRedisOptions(noReplyTimeoutMs);
  switch (target.kind) {
    case 'standalone':
      return new Redis(target.url, options);
    case 'sentinel':
      return new Redis({ ...options, sentinels: target.sentinels, name: target.name, db: target.db, password: target.password, sentinelRetryStrategy: reconnectDelay });
    case 'cluster': {
      const clusterOptions: ClusterOptions = {
        enableOfflineQueue: false,
        enableAutoPipelining: true,
        clusterRetryStrategy: reconnectDelay,
        // Fail fast during a failover too: ioredis' defaults would re-send a command to a dead or
        // voting cluster every 100 ms up to 16 times (~2 s). The next call finds the promoted
        // replica through the MOVED answer that refreshes the slot map.
        retryDelayOnFailover: 0,
        retryDelayOnClusterDown: 0,
        // Node connections keep ioredis' own cluster settings (an offline queue while a node
        // connection opens, no reconnect to a lost node: the slot map is fetched again instead).
        redisOptions: { connectTimeout: options.connectTimeout, socketTimeout: noReplyTimeoutMs, maxRetriesPerRequest: 0, password: target.password },
      };
      return new Cluster(target.nodes, clusterOptions);
    }
  }
}

/**
 * Logs connection trouble once per outage instead of on every reconnect attempt. `what` names the
 * connection in the messages (e.g. `redis`, `store (redis)`).
 */
export function logRedisConnectionState(redis: Redis | Cluster, logger: Logger, what = 'redis'): void {
  let down = false;
  redis.on('error', (err: Error) => {
    if (down) return;
    down = true;
    logger.warn({ err }, `${what} connection lost; reconnecting`);
  });
  redis.on('ready', () => {
    if (down) logger.info(`${what} connection restored`);
    down = false;
  });
}
