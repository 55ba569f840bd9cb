import { status } from '@grpc/grpc-js';
import { AppError, badRequest, toGrpcStatus } from '@sp/core';
import type { Logger } from '@sp/observability';
import type { CallContext, UnaryCall, UnaryCallback, UnaryHandler } from '@sp/grpc-server';
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
  /** The largest answer the transport sends: GetMany refuses, before building it, an answer that would be larger. */
  maxAnswerBytes: number;
  /**
   * Whether the store answers a read at once (the memory backend): GetMany then reads one key after
   * another and stops at the first that makes the answer too large, so a refused GetMany never
   * holds more than the limit. Over the network (Redis) the reads go out together, in one round trip
   * (after one that asks their lengths, when they could be too large).
   */
  localReads: boolean;
}

/**
 * An RPC on the decoded request (every field present: `defaults: true`) and its call's context
 * (whether the caller still waits). It may throw a refusal synchronously (validation) instead of
 * rejecting.
 */
type Handler<Req, Res> = (request: Req, call: CallContext) => Promise<Res>;

const EMPTY = Buffer.alloc(0);
/** A miss; the service never changes a response after answering it, so one object serves all. */
const MISS: CacheResponse = Object.freeze({ found: false, value: EMPTY, expiresAtUnixMs: 0 });
export const MAX_GET_MANY_KEYS = 1000;
/** What an entry of GetManyResponse costs besides its value: its tags and lengths, `found`, the expiry. */
const ENTRY_OVERHEAD_BYTES = 32;
const same = <T>(value: T): T => value;
/** The call ended (its client went away, its deadline passed) while the RPC worked: the answer goes nowhere. */
const CANCELLED = new AppError(499, 'cancelled', 'the call was cancelled');

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
  const readEntry = (key: string): Promise<CacheResponse> => store.get(key).then(answer);

  const get: Handler<CacheRequest__Output, Entry | undefined> = (request) => store.get(validateKey(request));

  const noRoom = (): AppError => new AppError(429, 'no_room', 'the server has no room for this answer now; retry later');
  const answerTooLarge = (): AppError => new AppError(429, 'answer_too_large', `the entries together exceed the largest answer (${deps.maxAnswerBytes} bytes): ask for fewer keys`);

  /**
   * When the values of `distinct` could together exceed the largest answer and the store can tell
   * their lengths without reading them (Redis), asks them (one more round trip) and refuses the
   * GetMany if they do, so that a refused GetMany never brings in more than it may answer.
   */
  async function checkLengths(distinct: readonly string[], repetitions: ReadonlyMap<string, number>, call: CallContext): Promise<void> {
    if (store.valueBytes === undefined || distinct.length * maxValueBytes <= deps.maxAnswerBytes) return;
    const lengths = await store.valueBytes(distinct);
    const bytes = distinct.reduce((total, key, i) => total + repetitions.get(key)! * (ENTRY_OVERHEAD_BYTES + lengths[i]!), 0);
    if (bytes > deps.maxAnswerBytes) throw answerTooLarge();
    if (!call.hasRoom(bytes)) throw noRoom();
    if (call.cancelled) throw CANCELLED;
  }

  /**
   * The entries of `keys` in their order, each distinct key read once (its entry then stands for
   * every repetition), refused RESOURCE_EXHAUSTED before the answer is built when their values
   * together would exceed the largest answer: 1,000 repetitions of one 1 MiB key cost one read,
   * not a gigabyte.
   */
  async function readEntries(keys: readonly string[], call: CallContext): Promise<CacheResponse[]> {
    const repetitions = new Map<string, number>();
    for (const key of keys) repetitions.set(key, (repetitions.get(key) ?? 0) + 1);
    const entries = new Map<string, CacheResponse>();
    let answerBytes = 0;
    const add = (key: string, entry: CacheResponse): void => {
      answerBytes += repetitions.get(key)! * (ENTRY_OVERHEAD_BYTES + (entry.value?.length ?? 0));
      if (answerBytes > deps.maxAnswerBytes) throw answerTooLarge();
      entries.set(key, entry);
    };
    const distinct = [...repetitions.keys()];
    if (deps.localReads) {
      for (const key of distinct) {
        if (call.cancelled) throw CANCELLED;
        add(key, await readEntry(key));
      }
    } else {
      // All reads start at once: the Redis client pipelines them into one round trip per node.
      await checkLengths(distinct, repetitions, call);
      const read = await Promise.all(distinct.map(readEntry));
      if (call.cancelled) throw CANCELLED;
      distinct.forEach((key, i) => add(key, read[i]!));
    }
    // Built only when the transport can hold it (its connection's and the process' budgets).
    if (!call.hasRoom(answerBytes)) throw noRoom();
    return keys.map((key) => entries.get(key)!);
  }

  const getMany: Handler<GetManyRequest__Output, GetManyResponse> = async (request, call) => {
    const { keys } = request;
    if (keys.length === 0 || keys.length > MAX_GET_MANY_KEYS) throw badRequest(`keys: from 1 to ${MAX_GET_MANY_KEYS}, got ${keys.length}`);
    if (!keysAreUtf8(request)) throw badRequest('keys must be valid UTF-8');
    return { entries: await readEntries(keys.map((key) => validateKey({ key })), call) };
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
    const failed = (err: unknown, started: number, call: CallContext, callback: UnaryCallback<Res>): void => {
      // A call nobody waits for any more: its status goes nowhere and is no failure of the service.
      const grpcStatus = call.cancelled ? { code: status.CANCELLED, details: 'cancelled' } : toGrpcStatus(err);
      metrics.rpcDuration.observe({ method, code: status[grpcStatus.code] }, (performance.now() - started) / 1000);
      if (grpcStatus.code === status.UNKNOWN || grpcStatus.code === status.UNAVAILABLE) logger.error({ err, method }, 'rpc failed');
      callback(grpcStatus);
    };
    return (call: UnaryCall<Req>, callback: UnaryCallback<Res>) => {
      const started = performance.now();
      let pending: Promise<Result>;
      try {
        // The transport runs a handler only for a call whose client waits; this holds if that changes.
        if (call.cancelled) throw CANCELLED;
        pending = handler(call.request, call);
      } catch (err) {
        failed(err, started, call, callback);
        return;
      }
      pending.then(
        (result) => {
          const response = respond(result);
          ok.observe((performance.now() - started) / 1000);
          callback(null, response);
        },
        (err: unknown) => failed(err, started, call, callback),
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
