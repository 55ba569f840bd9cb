import { setTimeout as sleep } from 'node:timers/promises';
import { credentials as grpcCredentials, Metadata, status, type CallOptions, type ChannelCredentials, type ChannelOptions, type ClientUnaryCall, type requestCallback, type ServiceError } from '@grpc/grpc-js';
import { AppError, backoffDelay, cacheTarget, unavailable } from '@sp/core';
import { createGetBatcher } from './get-batcher.js';
import { cacheServiceClient, type CacheRequest, type CacheResponse__Output, type GetManyRequest, type GetManyResponse__Output, type IncrementRequest, type IncrementResponse__Output } from './proto.js';
import { createNearCache, type NearCache, type NearCacheSettings, type NearCacheView, type NearEntry } from './near-cache.js';
import { jsonSerializer, type Serializer } from './serializers.js';

export interface CacheClientSettings {
  /** host:port of the cache service, e.g. `cache:7777` (a `grpc://` or `dns:` prefix is accepted). */
  address: string;
  /** Upper bound for one call, retries included. Default 2000 ms. */
  deadlineMs?: number;
  /**
   * Extra attempts after UNAVAILABLE (the service or its backend is briefly unreachable). Default 2.
   * A call that ended UNAVAILABLE may still have been applied, so a retried `increment` may add its
   * delta twice (a limit counted this way errs on the strict side) and a retried `setIfAbsent` may
   * meet the value its own first attempt stored (see `SetIfAbsentResult`).
   */
  retries?: number;
  /** Channel credentials; insecure (cleartext HTTP/2, as the service listens) by default. */
  credentials?: ChannelCredentials;
  /**
   * grpc-js channel options (keepalive, message sizes, …). Clients with equal options share one
   * connection per address; `'grpc.use_local_subchannel_pool': 1` gives a client its own.
   */
  channelOptions?: ChannelOptions;
  /**
   * Serve `get` of keys under these prefixes from this process' memory, kept fresh by the
   * service's invalidations (Subscribe). See NearCacheSettings for the bounds; `client.nearCache`
   * tells whether it is live. Keys under the prefixes should be changed only through the cache
   * service (or its Redis keys), which announces every change.
   */
  nearCache?: NearCacheSettings;
  /**
   * Send the gets made during one turn of the event loop as one GetMany call (default true), as
   * ioredis pipelines commands: under concurrent load a get then costs a fraction of a call of its
   * own, in this process and in the service. Gets of one key in the same turn are sent once and
   * share its answer (never the answer of a read sent before them). A get made alone still goes
   * out as one Get at once (after the current turn: microseconds). Against a service older than
   * contract 1.2 it falls back to one Get per key.
   */
  coalesce?: boolean;
}

/**
 * What `setIfAbsent` did. `stored: false` carries the live value that was kept. When a retry after
 * UNAVAILABLE finds exactly the bytes this call sent, the first attempt stored them and the result
 * is `stored: true`; store a unique value (a random id) where telling two writers apart matters.
 */
export type SetIfAbsentResult<T> = { stored: true } | { stored: false; value: T };

/** A counter after `increment`: its value and its expiry as a Unix timestamp in ms (0: none). */
export interface CounterValue {
  value: number;
  expiresAtUnixMs: number;
}

export interface CacheClient<T> {
  /** The value under key, or undefined when absent or expired. */
  get(key: string): Promise<T | undefined>;
  /**
   * The value the near cache holds for key, synchronously, without calling the service: undefined
   * when the key is not covered, the near cache is not live, or it holds no live entry (then only
   * `get` can tell). For hot paths that answer without a promise when they can.
   */
  peek(key: string): T | undefined;
  /** Stores value under key; `ttlMs` (milliseconds) bounds its life, none means no expiry. */
  set(key: string, value: T, ttlMs?: number): Promise<void>;
  /** Removes key; true when a live entry was removed. */
  remove(key: string): Promise<boolean>;
  /**
   * Removes key only when its live value serializes to exactly the bytes of `value`, atomically;
   * true when it removed it. A record read, acted on, then released goes this way, so a value
   * written in between (a newer lock holder, a newer code) is left alone. After a retry (see
   * `retries`) false may mean the first attempt removed it.
   */
  removeIfEquals(key: string, value: T): Promise<boolean>;
  /**
   * Adds `delta` (default 1) to the counter under key, atomically, and resolves with the new
   * value and the counter's expiry. A counter this call creates starts at 0 and lives `ttlMs`
   * (none: no expiry); later increments keep that expiry (a fixed window). Not idempotent: see
   * `retries`.
   */
  increment(key: string, delta?: number, ttlMs?: number): Promise<CounterValue>;
  /** Stores value under key only when no live entry exists, atomically. */
  setIfAbsent(key: string, value: T, ttlMs?: number): Promise<SetIfAbsentResult<T>>;
  /** The near cache, when `nearCache` was configured. */
  readonly nearCache: NearCacheView | undefined;
  close(): void;
}

/** One unary RPC of the generated client, in its full-argument form. */
type Unary<Req, Res> = (argument: Req, metadata: Metadata, options: CallOptions, callback: requestCallback<Res>) => ClientUnaryCall;

const RETRYABLE = new Set<number>([status.UNAVAILABLE]);

/** Errors become AppErrors: unreachable → 503; anything else is our bug → unexposed 500. */
function fromServiceError(err: ServiceError): AppError {
  // A full partition (RESOURCE_EXHAUSTED) refuses new records for now: a 503 to the caller, like an outage.
  if (err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED || err.code === status.RESOURCE_EXHAUSTED) return unavailable('cache service', err);
  return new AppError(500, 'cache_error', `cache service answered ${status[err.code]}: ${err.details}`, { cause: err });
}

/**
 * A typed client of the cache service. Values are turned into bytes by the serializer (JSON by
 * default). Every call has one deadline covering its retries, so a caller never waits longer.
 */
export function createCacheClient<T = unknown>(settings: CacheClientSettings, serializer: Serializer<T> = jsonSerializer as Serializer<T>): CacheClient<T> {
  const deadlineMs = settings.deadlineMs ?? 2000;
  const retries = settings.retries ?? 2;
  const Client = cacheServiceClient();
  const client = new Client(cacheTarget(settings.address), settings.credentials ?? grpcCredentials.createInsecure(), settings.channelOptions);

  const attempt = <Req, Res>(rpc: Unary<Req, Res>, request: Req, deadline: Date): Promise<Res> =>
    new Promise((resolve, reject) => {
      rpc(request, new Metadata(), { deadline }, (err, response) => (err ? reject(err) : resolve(response!)));
    });

  /** One call with its retries; `retried` tells whether an earlier attempt may have been applied. */
  async function call<Req, Res>(rpc: Unary<Req, Res>, request: Req): Promise<{ response: Res; retried: boolean }> {
    const deadline = new Date(Date.now() + deadlineMs);
    for (let attemptNo = 0; ; attemptNo++) {
      try {
        return { response: await attempt(rpc, request, deadline), retried: attemptNo > 0 };
      } catch (err) {
        const serviceError = err as ServiceError;
        const backoff = backoffDelay(attemptNo + 1, 50, deadlineMs);
        if (!RETRYABLE.has(serviceError.code) || attemptNo >= retries || Date.now() + backoff >= deadline.getTime()) throw fromServiceError(serviceError);
        await sleep(backoff);
      }
    }
  }

  const near: NearCache | undefined = settings.nearCache && createNearCache(settings.nearCache, (prefixes) => client.Subscribe({ prefixes: [...prefixes] }));

  // Bound once: a bind per call is work a hot path does not need.
  const rpc = {
    Get: client.Get.bind(client),
    GetMany: client.GetMany.bind(client),
    Set: client.Set.bind(client),
    Remove: client.Remove.bind(client),
    Increment: client.Increment.bind(client),
    SetIfAbsent: client.SetIfAbsent.bind(client),
    RemoveIfEquals: client.RemoveIfEquals.bind(client),
  };
  const getOne = async (key: string): Promise<CacheResponse__Output> => (await call<CacheRequest, CacheResponse__Output>(rpc.Get, { key })).response;
  const getMany = async (keys: string[]): Promise<CacheResponse__Output[]> => (await call<GetManyRequest, GetManyResponse__Output>(rpc.GetMany, { keys })).response.entries;
  const batcher = settings.coalesce === false ? undefined : createGetBatcher(getOne, getMany);
  const remoteGet = (key: string): Promise<CacheResponse__Output> => (batcher === undefined ? getOne(key) : batcher.get(key));

  /** A get of a key the near cache covers: from memory, or read through and kept if nothing changed meanwhile. */
  async function nearGet(cache: NearCache, key: string): Promise<T | undefined> {
    const held = cache.lookup(key);
    if (held !== undefined) return serializer.deserialize(held.bytes);
    const read = cache.begin(key);
    let entry: NearEntry | undefined;
    try {
      const response = await remoteGet(key);
      // A copy: the decoded bytes may share the (larger) buffer they arrived in.
      if (response.found) entry = { bytes: Buffer.from(response.value), expiresAtUnixMs: response.expiresAtUnixMs };
    } finally {
      cache.complete(read, entry);
    }
    // The kept copy's bytes: a deserializer that memoizes by buffer then parses them only once.
    return entry === undefined ? undefined : serializer.deserialize(entry.bytes);
  }

  /**
   * A write through this client drops its key from the near cache before and after it: a read
   * that overlapped the write does not keep what it read, so this client reads its own writes
   * without waiting for the announcement.
   */
  async function writing<R>(key: string, write: () => Promise<R>): Promise<R> {
    if (near === undefined || !near.covers(key)) return write();
    near.invalidate(key);
    try {
      return await write();
    } finally {
      near.invalidate(key);
    }
  }

  return {
    async get(key) {
      if (near?.covers(key)) return nearGet(near, key);
      const response = await remoteGet(key);
      return response.found ? serializer.deserialize(response.value) : undefined;
    },
    peek(key) {
      const held = near?.covers(key) ? near.lookup(key, false) : undefined;
      return held === undefined ? undefined : serializer.deserialize(held.bytes);
    },
    async set(key, value, ttlMs = 0) {
      await writing(key, () => call<CacheRequest, CacheResponse__Output>(rpc.Set, { key, value: serializer.serialize(value), ttlMs }));
    },
    async remove(key) {
      return (await writing(key, () => call<CacheRequest, CacheResponse__Output>(rpc.Remove, { key }))).response.found;
    },
    async removeIfEquals(key, value) {
      return (await writing(key, () => call<CacheRequest, CacheResponse__Output>(rpc.RemoveIfEquals, { key, value: serializer.serialize(value) }))).response.found;
    },
    async increment(key, delta = 1, ttlMs = 0) {
      const { response } = await writing(key, () => call<IncrementRequest, IncrementResponse__Output>(rpc.Increment, { key, delta, ttlMs }));
      return { value: response.value, expiresAtUnixMs: response.expiresAtUnixMs };
    },
    async setIfAbsent(key, value, ttlMs = 0) {
      const bytes = serializer.serialize(value);
      const { response, retried } = await writing(key, () => call<CacheRequest, CacheResponse__Output>(rpc.SetIfAbsent, { key, value: bytes, ttlMs }));
      if (!response.found || (retried && response.value.equals(bytes))) return { stored: true };
      return { stored: false, value: serializer.deserialize(response.value) };
    },
    nearCache: near,
    close: () => {
      near?.close();
      client.close();
    },
  };
}
