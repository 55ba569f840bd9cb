import { HealthImplementation, type ServingStatus } from 'grpc-health-check';
import { ReflectionService } from '@grpc/reflection';
import { cacheServiceDefinition } from '@sp/cache-client';
import { DEFAULT_LIMITS, GrpcServer, type LimitName } from '@sp/grpc-server';
import type { Logger } from '@sp/observability';
import { MESSAGE_OVERHEAD_BYTES, type GrpcSettings } from './config.js';
import { withCacheMessageCodec } from './cache-message-codec.js';
import { reflectionPackageDefinition } from './reflection-descriptors.js';
import { refusingInvalidUtf8Keys } from './utf8-keys.js';

export const CACHE_SERVICE_NAME = 'cache.v1.CacheGrpcService';

/**
 * Concurrent calls (HTTP/2 streams) one connection may have open by default
 * (Grpc__MaxConcurrentStreams); a client's further calls wait in its own queue until one ends. 100
 * is the least RFC 9113 recommends; the platform's clients keep a few calls in flight per
 * connection, each well under a millisecond.
 */
export const MAX_CONCURRENT_STREAMS = DEFAULT_LIMITS.maxConcurrentStreams;

export interface CacheServer {
  health: HealthImplementation;
  /** Sets the gRPC health status of the server ('') and of the cache service. */
  setServing(serving: boolean): void;
  listen(port: number, host: string): Promise<number>;
  /** Stops accepting calls and waits for in-flight ones, cutting them after `graceMs`. */
  close(graceMs: number): Promise<void>;
  /** Bytes the transport holds for calls now (request headers and messages, unsent answers). */
  readonly bufferedBytes: number;
}

export interface CacheServerOptions {
  maxValueBytes: number;
  logger: Logger;
  /** The transport's limits (the defaults of @sp/grpc-server when absent). */
  grpc?: GrpcSettings;
  /** Told each time a limit of the transport acts (a metric). */
  onLimit?: (limit: LimitName) => void;
}

/**
 * One gRPC server carrying the cache service, grpc.health.v1.Health and server reflection. A
 * message is received only up to the largest value accepted (`maxValueBytes`) and a key: a larger
 * one is refused (RESOURCE_EXHAUSTED) before it is buffered and decoded whole.
 */
export function createCacheServer(cacheService: Readonly<Record<string, unknown>>, options: CacheServerOptions): CacheServer {
  const server = new GrpcServer({
    ...options.grpc,
    maxReceiveMessageBytes: options.maxValueBytes + MESSAGE_OVERHEAD_BYTES,
    logger: options.logger,
    ...(options.onLimit === undefined ? {} : { onLimit: options.onLimit }),
  });
  server.addService(withCacheMessageCodec(refusingInvalidUtf8Keys(cacheServiceDefinition())), cacheService);
  const health = new HealthImplementation({ '': 'NOT_SERVING', [CACHE_SERVICE_NAME]: 'NOT_SERVING' });
  health.addToServer(server);
  new ReflectionService(reflectionPackageDefinition()).addToServer(server);

  return {
    health,
    setServing(serving) {
      const state: ServingStatus = serving ? 'SERVING' : 'NOT_SERVING';
      health.setStatus('', state);
      health.setStatus(CACHE_SERVICE_NAME, state);
    },
    listen: (port, host) => server.listen(port, host),
    close: (graceMs) => server.close(graceMs),
    get bufferedBytes() {
      return server.bufferedBytes;
    },
  };
}
