import type { Registry } from 'prom-client';
import { connectRedis, parseRedisUrl, type Logger, type ReadinessCheck } from '@sp/platform';
import type { CacheConfig } from './config.js';
import { createCacheMetrics, type CacheMetrics } from './cache-metrics.js';
import { createCacheService } from './cache-service.js';
import { createMemoryStore } from './memory-store.js';
import { createPartitionedStore } from './partitioned-store.js';
import { createRedisStore } from './redis-store.js';
import { createCacheServer, type CacheServer } from './server.js';
import type { CacheStore } from './store.js';

export interface CacheApp {
  grpc: CacheServer;
  store: CacheStore;
  readiness: ReadinessCheck[];
  /** Re-evaluates gRPC health from the store's readiness (memory: always serving). */
  refreshHealth(): Promise<void>;
}

/** The memory backend: one LRU store, or one per configured key prefix besides it. */
function memoryStore(backend: Extract<CacheConfig['backend'], { kind: 'memory' }>, metrics: CacheMetrics): CacheStore {
  const rest = createMemoryStore({ capacity: backend.capacity, events: metrics.storeEvents });
  const partitions = backend.partitions ?? [];
  if (partitions.length === 0) return rest;
  return createPartitionedStore(
    rest,
    partitions.map(({ prefix, capacity, policy }) => ({ prefix, store: createMemoryStore({ capacity, policy, name: `keys under "${prefix}"`, events: metrics.storeEvents }) })),
  );
}

/** Wires the store chosen by configuration into the gRPC server; listening is the caller's. */
export function createCacheApp(config: Pick<CacheConfig, 'backend' | 'maxValueBytes'>, deps: { registry: Registry; logger: Logger }): CacheApp {
  // The items gauge reads the store when scraped, by which time it exists.
  const metrics = createCacheMetrics(deps.registry, () => store.size());
  const store: CacheStore = config.backend.kind === 'redis' ? createRedisStore(connectRedis(parseRedisUrl(config.backend.url)), config.backend.keyPrefix) : memoryStore(config.backend, metrics);
  const grpc = createCacheServer(createCacheService({ store, metrics, logger: deps.logger, maxValueBytes: config.maxValueBytes }), { maxValueBytes: config.maxValueBytes });
  const readiness: ReadinessCheck[] = config.backend.kind === 'redis' ? [{ name: 'redis', check: () => store.check() }] : [];
  const refreshHealth = async (): Promise<void> => {
    const serving = await store.check().then(() => true, () => false);
    grpc.setServing(serving);
  };
  return { grpc, store, readiness, refreshHealth };
}
