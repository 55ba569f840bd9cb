import { parseRedisUrl, unavailable } from '@sp/core';
import type { Logger } from '@sp/observability';
import { connectRedis } from '@sp/storage';
import type { CacheMetrics } from './cache-metrics.js';
import type { CacheConfig } from './config.js';
import { createInvalidationHub, type ChangeKind, type InvalidationHub } from './invalidation-hub.js';
import { watchKeyspace } from './keyspace-notifications.js';
import { createMemoryStore } from './memory-store.js';
import { createPartitionedStore } from './partitioned-store.js';
import { createRedisStore } from './redis-store.js';
import type { CacheStore } from './store.js';

/** The store the configuration names, and the fan-out of its changes to Subscribe streams. */
export interface CacheBackend {
  store: CacheStore;
  invalidations: InvalidationHub;
}

/** The memory backend: one LRU store, or one per configured key prefix besides it. */
function memoryStore(backend: Extract<CacheConfig['backend'], { kind: 'memory' }>, metrics: CacheMetrics, hub: InvalidationHub, now?: () => number): CacheStore {
  const onChange = (key: string, kind: ChangeKind): void => hub.announce(key, kind);
  const clock = now === undefined ? {} : { now };
  const rest = createMemoryStore({ capacity: backend.capacity, events: metrics.storeEvents, onChange, ...clock });
  const partitions = backend.partitions ?? [];
  if (partitions.length === 0) return rest;
  return createPartitionedStore(
    rest,
    partitions.map(({ prefix, capacity, policy }) => ({ prefix, store: createMemoryStore({ capacity, policy, name: `keys under "${prefix}"`, events: metrics.storeEvents, onChange, ...clock }) })),
  );
}

/** The memory backend announces its own changes. */
function memoryBackend(backend: Extract<CacheConfig['backend'], { kind: 'memory' }>, metrics: CacheMetrics, now?: () => number): CacheBackend {
  const invalidations = createInvalidationHub();
  return { store: memoryStore(backend, metrics, invalidations, now), invalidations };
}

/** The Redis backend; its announcements come from Redis' keyspace notifications, whoever wrote. */
function redisBackend(backend: Extract<CacheConfig['backend'], { kind: 'redis' }>, logger: Logger): CacheBackend {
  const target = parseRedisUrl(backend.url);
  const redis = connectRedis(target);
  const invalidations = createInvalidationHub(unavailable('redis keyspace notifications'));
  const watch = watchKeyspace(target, redis, invalidations, { keyPrefix: backend.keyPrefix, logger });
  const store = createRedisStore(redis, backend.keyPrefix);
  return {
    store: {
      ...store,
      close: async () => {
        watch.close();
        await store.close();
      },
    },
    invalidations,
  };
}

/**
 * The backend `Cache__Backend` names: memory (in this process, expiring on `now`) or Redis (shared
 * by the replicas, expiring on the Redis server's time).
 */
export function createCacheBackend(backend: CacheConfig['backend'], metrics: CacheMetrics, logger: Logger, now?: () => number): CacheBackend {
  return backend.kind === 'redis' ? redisBackend(backend, logger) : memoryBackend(backend, metrics, now);
}
