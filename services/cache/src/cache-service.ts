import { status, type sendUnaryData, type ServerUnaryCall, type UntypedServiceImplementation } from '@grpc/grpc-js';
import { toGrpcStatus, type Logger } from '@sp/platform';
import type { CacheRequest, CacheResponse } from '@sp/cache-client';
import type { CacheStore } from './store.js';
import type { CacheMetrics } from './cache-metrics.js';
import { validateKey, validateSet } from './validation.js';

export interface CacheServiceDeps {
  store: CacheStore;
  metrics: CacheMetrics;
  logger: Logger;
  maxValueBytes: number;
}

type Handler = (request: Partial<CacheRequest>) => Promise<Partial<CacheResponse>>;

const EMPTY = Buffer.alloc(0);

/** The three RPCs of cache.v1.CacheGrpcService over a store. */
export function createCacheService(deps: CacheServiceDeps): UntypedServiceImplementation {
  const { store, metrics, logger, maxValueBytes } = deps;

  const get: Handler = async (request) => {
    const entry = await store.get(validateKey(request));
    if (entry === undefined) {
      metrics.misses.inc();
      return { found: false, value: EMPTY, expiresAtUnixMs: 0 };
    }
    metrics.hits.inc();
    return { found: true, value: entry.value, expiresAtUnixMs: entry.expiresAtUnixMs };
  };

  const set: Handler = async (request) => {
    const { key, value, ttlMs } = validateSet(request, maxValueBytes);
    const entry = await store.set(key, value, ttlMs);
    metrics.sets.inc();
    return { found: true, value: EMPTY, expiresAtUnixMs: entry.expiresAtUnixMs };
  };

  const remove: Handler = async (request) => {
    const found = await store.remove(validateKey(request));
    if (found) metrics.removals.inc();
    return { found, value: EMPTY, expiresAtUnixMs: 0 };
  };

  /** Adapts a handler to grpc-js: one place maps errors to status codes and records latency. */
  const unary = (method: string, handler: Handler) => (call: ServerUnaryCall<CacheRequest, CacheResponse>, callback: sendUnaryData<Partial<CacheResponse>>) => {
    const end = metrics.rpcDuration.startTimer({ method });
    handler(call.request).then(
      (response) => {
        end({ code: 'OK' });
        callback(null, response);
      },
      (err: unknown) => {
        const grpcStatus = toGrpcStatus(err);
        end({ code: status[grpcStatus.code] });
        if (grpcStatus.code === status.UNKNOWN || grpcStatus.code === status.UNAVAILABLE) logger.error({ err, method }, 'rpc failed');
        callback(grpcStatus);
      },
    );
  };

  return { Get: unary('Get', get), Set: unary('Set', set), Remove: unary('Remove', remove) };
}
