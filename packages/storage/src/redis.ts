import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { backoffDelay } from '@sp/core';
import type { Logger } from 'pino';
import type { RedisTarget } from '@sp/core';

// ioredis counts attempts from 1: 100 ms, 200 ms, … up to 2 s.
const reconnectDelay = (attempt: number): number => backoffDelay(attempt + 1, 50, 2000);

/**
 * Connection settings that fail fast instead of queueing: while Redis is unreachable a command
 * rejects at once (no offline queue, no retry on another connection), and reconnection goes on in
 * the background forever, so the service recovers by itself when Redis returns (or, on Sentinel
 * and Cluster, when a replica has been promoted). A Redis that accepts but never answers (hung, or
 * a network partition) is caught by the stores' calls (`createRedisStoreBase`: no reply within
 * its timeout drops the connection), not by ioredis' `socketTimeout`, which takes a reply that
 * came while this process stalled for none (redis-store-base.ts says how).
 */
const failFastRedisOptions: RedisOptions = {
  enableOfflineQueue: false,
  // Commands issued in the same tick share one write: concurrent calls cost fewer round trips.
  enableAutoPipelining: true,
  maxRetriesPerRequest: 0,
  connectTimeout: 2000,
  retryStrategy: reconnectDelay,
};

/**
 * A client with the fail-fast settings: the one way the services connect to Redis, whose calls go
 * through a store base (`createRedisStoreBase`). A standalone target gives a plain `Redis`.
 */
export function connectRedis(target: Extract<RedisTarget, { kind: 'standalone' }>): Redis;
export function connectRedis(target: RedisTarget): Redis | Cluster;
export function connectRedis(target: RedisTarget): Redis | Cluster {
  const options = failFastRedisOptions;
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
        redisOptions: { connectTimeout: options.connectTimeout, maxRetriesPerRequest: 0, password: target.password },
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
