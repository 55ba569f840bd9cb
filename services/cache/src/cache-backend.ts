import type { Registry } from 'prom-client';
import { AppError, connectRedis, parseRedisUrl, unavailable, type Logger, type ReadinessCheck } from '@sp/platform';
import type { CacheConfig } from './config.js';
import { createCacheMetrics, type CacheMetrics } from './cache-metrics.js';
import { createCacheService } from './cache-service.js';
import { createInvalidationHub, type ChangeKind, type InvalidationHub } from './invalidation-hub.js';
import { watchKeyspace } from './keyspace-notifications.js';
import { createMemoryStore } from './memory-store.js';
import { createPartitionedStore } from './partitioned-store.js';
import { createRedisStore } from './redis-store.js';
import { createCacheServer, type CacheServer } from './server.js';
import type { CacheStore } from './store.js';
import { createSubscribeHandler } from './subscribe-rpc.js';

export interface CacheApp {
  grpc: CacheServer;
  store: CacheStore;
  /** Subscribe's fan-out; `grpc.close` ends its streams first, so they do not hold the shutdown open. */
  invalidations: InvalidationHub;
  readiness: ReadinessCheck[];
  /** Re-evaluates gRPC health from the store's readiness (memory: always serving). */
  refreshHealth(): Promise<void>;
}

/** The memory backend: one LRU store, or one per configured key prefix besides it. */
function memoryStore(backend: Extract<CacheConfig['backend'], { kind: 'memory' }>, metrics: CacheMetrics, hub: InvalidationHub): CacheStore {
  const onChange = (key: string, kind: ChangeKind): void => hub.announce(key, kind);
  const rest = createMemoryStore({ capacity: backend.capacity, events: metrics.storeEvents, onChange });
  const partitions = backend.partitions ?? [];
  if (partitions.length === 0) return rest;
  return createPartitionedStore(
    rest,
    partitions.map(({ prefix, capacity, policy }) => ({ prefix, store: createMemoryStore({ capacity, policy, name: `keys under "${prefix}"`, events: metrics.storeEvents, onChange }) })),
  );
}

const SHUTTING_DOWN = new AppError(503, 'unavailable', 'this cache replica is shutting down');

/** The memory backend announces its own changes. */
function memoryBackend(backend: Extract<CacheConfig['backend'], { kind: 'memory' }>, metrics: CacheMetrics): { store: CacheStore; invalidations: InvalidationHub } {
  const invalidations = createInvalidationHub();
  return { store: memoryStore(backend, metrics, invalidations), invalidations };
}

/** The Redis backend; its announcements come from Redis' keyspace notifications, whoever wrote. */
function redisBackend(backend: Extract<CacheConfig['backend'], { kind: 'redis' }>, logger: Logger): { store: CacheStore; invalidations: InvalidationHub } {
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

/** Wires the store chosen by configuration into the gRPC server; listening is the caller's. */
export function createCacheApp(config: Pick<CacheConfig, 'backend' | 'maxValueBytes'>, deps: { registry: Registry; logger: Logger }): CacheApp {
  // The gauges read the store and the hub when scraped, by which time both exist.
  const metrics = createCacheMetrics(deps.registry, { items: () => store.size(), subscriptions: () => invalidations.size() });
  const { store, invalidations } = config.backend.kind === 'redis' ? redisBackend(config.backend, deps.logger) : memoryBackend(config.backend, metrics);
  const service = createCacheService({ store, metrics, logger: deps.logger, maxValueBytes: config.maxValueBytes });
  const server = createCacheServer({ ...service, Subscribe: createSubscribeHandler(invalidations) }, { maxValueBytes: config.maxValueBytes });
  const grpc: CacheServer = {
    ...server,
    close: (graceMs) => {
      invalidations.close(SHUTTING_DOWN);
      return server.close(graceMs);
    },
  };
  const readiness: ReadinessCheck[] = config.backend.kind === 'redis' ? [{ name: 'redis', check: () => store.check() }] : [];
  const refreshHealth = async (): Promise<void> => {
    const serving = await store.check().then(() => true, () => false);
    grpc.setServing(serving);
  };
  return { grpc, store, invalidations, readiness, refreshHealth };
}
