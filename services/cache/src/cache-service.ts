import { status } from '@grpc/grpc-js';
import { badRequest, toGrpcStatus, type Logger } from '@sp/platform';
import type { UnaryCall, UnaryCallback, UnaryHandler } from '@sp/grpc-server';
import type { CacheGrpcServiceHandlers, CacheRequest__Output, CacheResponse, GetManyRequest__Output, GetManyResponse, IncrementRequest__Output, IncrementResponse } from '@sp/cache-client';
import type { CacheStore, Entry } from './store.js';
import type { CacheMetrics } from './cache-metrics.js';
import { validateIncrement, validateKey, validateKeyAndValue, validateSet } from './validation.js';
import { keysAreUtf8 } from './utf8-keys.js';

export interface CacheServiceDeps {
  store: CacheStore;
  metrics: CacheMetrics;
  logger: Logger;
  maxValueBytes: number;
}

/**
 * An RPC on the decoded request (every field present: `defaults: true`). It may throw a refusal
 * synchronously (validation) instead of rejecting.
 */
type Handler<Req, Res> = (request: Req) => Promise<Res>;

const EMPTY = Buffer.alloc(0);
/** A miss; the service never changes a response after answering it, so one object serves all. */
const MISS: CacheResponse = Object.freeze({ found: false, value: EMPTY, expiresAtUnixMs: 0 });
export const MAX_GET_MANY_KEYS = 1000;
const same = <T>(value: T): T => value;

/** The unary RPCs of cache.v1.CacheGrpcService over a store (Subscribe is subscribe-rpc's). */
export function createCacheService(deps: CacheServiceDeps): Record<Exclude<keyof CacheGrpcServiceHandlers, 'Subscribe'>, UnaryHandler<never, unknown>> {
  const { store, metrics, logger, maxValueBytes } = deps;

  // Get is the hot call: the store's promise and one reaction per call, no async function around it.
  const answer = (entry: Entry | undefined): CacheResponse => {
    if (entry === undefined) {
      metrics.misses.inc();
      return MISS;
    }
    metrics.hits.inc();
    return { found: true, value: entry.value, expiresAtUnixMs: entry.expiresAtUnixMs };
  };
  const read = (key: string): Promise<CacheResponse> => store.get(key).then(answer);

  const get: Handler<CacheRequest__Output, Entry | undefined> = (request) => store.get(validateKey(request));

  const getMany: Handler<GetManyRequest__Output, GetManyResponse> = async (request) => {
    const { keys } = request;
    if (keys.length === 0 || keys.length > MAX_GET_MANY_KEYS) throw badRequest(`keys: from 1 to ${MAX_GET_MANY_KEYS}, got ${keys.length}`);
    if (!keysAreUtf8(request)) throw badRequest('keys must be valid UTF-8');
    const checked = keys.map((key) => validateKey({ key }));
    // All reads start at once: the Redis client pipelines them into one round trip per node.
    return { entries: await Promise.all(checked.map(read)) };
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

  const removeIfEquals: Handler<CacheRequest__Output, CacheResponse> = async (request) => {
    const { key, value } = validateKeyAndValue(request, maxValueBytes);
    const found = await store.removeIfEquals(key, value);
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

  /**
   * Adapts a handler to the gRPC server (platform's GrpcServer): one place maps errors to status codes and records latency. The
   * histogram child of a method's OK calls is looked up once, not per call (a label lookup costs
   * more than the observation). `respond` turns the handler's result into the response in the same
   * reaction (Get: no second promise per call); `unary` is an RPC whose handler answers the response.
   */
  const rpc = <Req, Result, Res>(method: string, handler: Handler<Req, Result>, respond: (result: Result) => Res) => {
    const ok = metrics.rpcDuration.labels({ method, code: 'OK' });
    const failed = (err: unknown, started: number, callback: UnaryCallback<Res>): void => {
      const grpcStatus = toGrpcStatus(err);
      metrics.rpcDuration.observe({ method, code: status[grpcStatus.code] }, (performance.now() - started) / 1000);
      if (grpcStatus.code === status.UNKNOWN || grpcStatus.code === status.UNAVAILABLE) logger.error({ err, method }, 'rpc failed');
      callback(grpcStatus);
    };
    return (call: UnaryCall<Req>, callback: UnaryCallback<Res>) => {
      const started = performance.now();
      let pending: Promise<Result>;
      try {
        pending = handler(call.request);
      } catch (err) {
        failed(err, started, callback);
        return;
      }
      pending.then(
        (result) => {
          const response = respond(result);
          ok.observe((performance.now() - started) / 1000);
          callback(null, response);
        },
        (err: unknown) => failed(err, started, callback),
      );
    };
  };

  const unary = <Req, Res>(method: string, handler: Handler<Req, Res>) => rpc(method, handler, same);

  return {
    Get: rpc('Get', get, answer),
    GetMany: unary('GetMany', getMany),
    Set: unary('Set', set),
    Remove: unary('Remove', remove),
    Increment: unary('Increment', increment),
    SetIfAbsent: unary('SetIfAbsent', setIfAbsent),
    RemoveIfEquals: unary('RemoveIfEquals', removeIfEquals),
  };
}
