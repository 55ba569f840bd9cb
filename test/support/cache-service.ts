import { createRegistry } from '@sp/observability';
import { createCache } from '../../services/cache/src/cache.js';
import type { PartitionConfig } from '../../services/cache/src/config.js';
import { silentLogger } from './silent-logger.js';

export interface RunningCacheService {
  /** host:port for Cache__Url / createCacheClient. */
  address: string;
  /** What its /metrics serves (Prometheus text). */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/**
 * The real cache service (gRPC, memory backend unless a Redis URL is given) on a free loopback
 * port, for tests of the services that use it.
 */
export async function startCacheService(
  options: {
    redisUrl?: string;
    keyPrefix?: string;
    capacity?: number;
    partitions?: readonly PartitionConfig[];
    /** to restart one in place */
    port?: number;
    /** the memory backend's clock (a test's clock, shared with the service under test) */
    now?: () => number;
  } = {},
): Promise<RunningCacheService> {
  const backend = options.redisUrl
    ? { kind: 'redis' as const, url: options.redisUrl, keyPrefix: options.keyPrefix ?? 'cache:' }
    : { kind: 'memory' as const, capacity: options.capacity ?? 10_000, partitions: options.partitions ?? [] };
  const registry = createRegistry('cache');
  const cache = createCache({ port: options.port ?? 0, host: '127.0.0.1', backend, maxValueBytes: 1024 * 1024 }, { registry, logger: silentLogger('cache'), ...(options.now === undefined ? {} : { now: options.now }) });
  const port = await cache.api.start();
  return {
    address: `127.0.0.1:${port}`,
    metrics: () => registry.metrics(),
    close: async () => {
      await cache.api.drain(1000);
      await cache.close();
    },
  };
}
