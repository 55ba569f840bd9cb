import { AppError } from '@sp/core';
import type { Logger, Registry } from '@sp/observability';
import type { ReadinessCheck, ServedApi } from '@sp/http';
import { createCacheBackend } from './cache-backend.js';
import { createCacheMetrics } from './cache-metrics.js';
import { createCacheService } from './cache-service.js';
import { loadConfig, type CacheConfig } from './config.js';
import { createCacheServer } from './server.js';
import { createSubscribeHandler } from './subscribe-rpc.js';

export interface CacheRuntime {
  logger: Logger;
  registry: Registry;
  /** The memory backend's clock for expiry, in Unix ms (default Date.now); Redis keeps its own time. */
  now?: () => number;
}

/** Test timings; the cache's adapters are the store its configuration names. */
export interface CacheOverrides {
  /** How often the gRPC health status follows the store's readiness (default 5 s). */
  healthRefreshMs?: number;
}

export interface Cache {
  /**
   * The gRPC server (cache, grpc.health.v1.Health, reflection) on `config.port`, to be served
   * (main.ts: the platform's serveService). Serving sets the health status from the store's
   * readiness and keeps it current; `stopServing` turns it to NOT_SERVING for good.
   */
  api: ServedApi<number>;
  /** What /readyz checks (the memory backend: nothing). */
  readiness: ReadinessCheck[];
  /** Closes the store once the server drained (shutdown). */
  close(): Promise<void>;
}

/** What the root reads of the configuration: the management listener and the grace period are serveService's. */
export type CacheSettings = Pick<CacheConfig, 'port' | 'host' | 'backend' | 'maxValueBytes'> & Partial<Pick<CacheConfig, 'grpc'>>;

const SHUTTING_DOWN = new AppError(503, 'unavailable', 'this cache replica is shutting down');

/**
 * The cache service's composition root: the backend the configuration names (memory or Redis,
 * with its invalidation fan-out), the cache RPCs and Subscribe on it, and the gRPC server
 * carrying them. main.ts and the tests both build the service through it.
 */
export function createCache(config: CacheSettings, runtime: CacheRuntime, overrides: CacheOverrides = {}): Cache {
  const { logger } = runtime;
  if (config.backend.kind === 'memory') {
    logger.info({ capacity: config.backend.capacity }, 'memory backend: entries live in this process only; use redis for more than one replica');
  }
  // The gauges read the store and the hub when scraped, by which time both exist.
  const metrics = createCacheMetrics(runtime.registry, { items: () => store.size(), subscriptions: () => invalidations.size(), transportBytes: () => grpc.bufferedBytes });
  const { store, invalidations } = createCacheBackend(config.backend, metrics, logger, runtime.now);
  // Tests may leave the transport's limits out: then the defaults loadConfig gives that value limit.
  const grpcSettings = config.grpc ?? loadConfig({ Cache__MaxValueBytes: String(config.maxValueBytes) }).grpc;
  const maxAnswerBytes = grpcSettings.maxSendMessageBytes;
  const service = createCacheService({ store, metrics, logger, maxValueBytes: config.maxValueBytes, maxAnswerBytes, localReads: config.backend.kind === 'memory' });
  const grpc = createCacheServer(
    { ...service, Subscribe: createSubscribeHandler(invalidations) },
    { maxValueBytes: config.maxValueBytes, logger, grpc: grpcSettings, onLimit: (limit) => metrics.transportLimits.inc({ limit }) },
  );
  const refreshHealth = async (): Promise<void> => grpc.setServing(await store.check().then(() => true, () => false));
  let healthTimer: NodeJS.Timeout | undefined;
  // Stopped before the server closes: a refresh after that would fail the shutdown.
  const stopHealthRefresh = (): void => clearInterval(healthTimer);
  return {
    api: {
      async start() {
        const port = await grpc.listen(config.port, config.host);
        await refreshHealth();
        healthTimer = setInterval(() => void refreshHealth(), overrides.healthRefreshMs ?? 5000);
        healthTimer.unref();
        return port;
      },
      stopServing() {
        stopHealthRefresh();
        grpc.setServing(false);
      },
      drain(graceMs) {
        stopHealthRefresh();
        // Subscribe streams never end on their own: ended first, they do not hold the drain open.
        invalidations.close(SHUTTING_DOWN);
        return grpc.close(graceMs);
      },
    },
    readiness: config.backend.kind === 'redis' ? [{ name: 'redis', check: () => store.check() }] : [],
    close: () => store.close(),
  };
}
