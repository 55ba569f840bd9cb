import { status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { toGrpcStatus, type Logger } from '@sp/platform';
import type { CacheGrpcServiceHandlers, CacheRequest__Output, CacheResponse, IncrementRequest__Output, IncrementResponse } from '@sp/cache-client';
import type { CacheStore } from './store.js';
import type { CacheMetrics } from './cache-metrics.js';
import { validateIncrement, validateKey, validateSet } from './validation.js';

export interface CacheServiceDeps {
  store: CacheStore;
  metrics: CacheMetrics;
  logger: Logger;
  maxValueBytes: number;
}

/** An RPC on the decoded request (every field present: `defaults: true`). */
type Handler<Req, Res> = (request: Req) => Promise<Res>;

const EMPTY = Buffer.alloc(0);

/** The unary RPCs of cache.v1.CacheGrpcService over a store (Subscribe is subscribe-rpc's). */
export function createCacheService(deps: CacheServiceDeps): Omit<CacheGrpcServiceHandlers, 'Subscribe'> {
  const { store, metrics, logger, maxValueBytes } = deps;

  const get: Handler<CacheRequest__Output, CacheResponse> = async (request) => {
    const entry = await store.get(validateKey(request));
    if (entry === undefined) {
      metrics.misses.inc();
      return { found: false, value: EMPTY, expiresAtUnixMs: 0 };
    }
    metrics.hits.inc();
    return { found: true, value: entry.value, expiresAtUnixMs: entry.expiresAtUnixMs };
  };

  const set: Handler<CacheRequest__Output, CacheResponse> = async (request) => {
    const { key, value, ttlMs } = validateSet(request, maxValueBytes);
    const entry = await store.set(key, value, ttlMs);
    metrics.sets.inc();
    return { found: true, value: EMPTY, expiresAtUnixMs: entry.expiresAtUnixMs };
  };

  const remove: Handler<CacheRequest__Output, CacheResponse> = async (request) => {
    const found = await store.remove(validateKey(request));
    if (found) metrics.removals.inc();
    return { found, value: EMPTY, expiresAtUnixMs: 0 };
  };

  const increment: Handler<IncrementRequest__Output, IncrementResponse> = async (request) => {
    const { key, delta, ttlMs } = validateIncrement(request);
    const counter = await store.increment(key, delta, ttlMs);
    metrics.increments.inc();
    return counter;
  };

  const setIfAbsent: Handler<CacheRequest__Output, CacheResponse> = async (request) => {
    const { key, value, ttlMs } = validateSet(request, maxValueBytes);
    const { stored, entry } = await store.setIfAbsent(key, value, ttlMs);
    metrics.setIfAbsent.inc({ result: stored ? 'stored' : 'found' });
    return stored ? { found: false, value: EMPTY, expiresAtUnixMs: entry.expiresAtUnixMs } : { found: true, value: entry.value, expiresAtUnixMs: entry.expiresAtUnixMs };
  };

  /** Adapts a handler to grpc-js: one place maps errors to status codes and records latency. */
  const unary =
    <Req, Res>(method: string, handler: Handler<Req, Res>) =>
    (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
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

  return {
    Get: unary('Get', get),
    Set: unary('Set', set),
    Remove: unary('Remove', remove),
    Increment: unary('Increment', increment),
    SetIfAbsent: unary('SetIfAbsent', setIfAbsent),
  };
}
