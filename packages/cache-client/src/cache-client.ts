import { credentials as grpcCredentials, Metadata, status, type ChannelCredentials, type Client, type ServiceError } from '@grpc/grpc-js';
import { AppError, unavailable } from '@sp/platform';
import { cacheServiceClient, type CacheRequest, type CacheResponse } from './proto.js';
import { jsonSerializer, type Serializer } from './serializers.js';

export interface CacheClientSettings {
  /** host:port of the cache service, e.g. `cache:7777` (a `grpc://` or `dns:` prefix is accepted). */
  address: string;
  /** Upper bound for one call, retries included. Default 2000 ms. */
  deadlineMs?: number;
  /** Extra attempts after UNAVAILABLE (the service or its backend is briefly unreachable). Default 2. */
  retries?: number;
  /** Channel credentials; insecure (cleartext HTTP/2, as the service listens) by default. */
  credentials?: ChannelCredentials;
}

export interface CacheClient<T> {
  /** The value under key, or undefined when absent or expired. */
  get(key: string): Promise<T | undefined>;
  /** Stores value under key; `ttlMs` (milliseconds) bounds its life, none means no expiry. */
  set(key: string, value: T, ttlMs?: number): Promise<void>;
  /** Removes key; true when a live entry was removed. */
  remove(key: string): Promise<boolean>;
  close(): void;
}

type Method = 'Get' | 'Set' | 'Remove';
type Unary = (request: Partial<CacheRequest>, metadata: Metadata, options: { deadline: Date }, callback: (err: ServiceError | null, response?: CacheResponse) => void) => void;

const RETRYABLE = new Set<number>([status.UNAVAILABLE]);

function normalizeAddress(address: string): string {
  return address.replace(/^grpc:\/\//, '').replace(/\/$/, '');
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Errors become AppErrors: unreachable → 503; anything else is our bug → unexposed 500. */
function toAppError(err: ServiceError): AppError {
  if (err.code === status.UNAVAILABLE || err.code === status.DEADLINE_EXCEEDED) return unavailable('cache service', err);
  return new AppError(500, 'cache_error', `cache service answered ${status[err.code]}: ${err.details}`, { cause: err });
}

/**
 * A typed client of the cache service. Values are turned into bytes by the serializer (JSON by
 * default). Every call has one deadline covering its retries, so a caller never waits longer.
 */
export function createCacheClient<T = unknown>(settings: CacheClientSettings, serializer: Serializer<T> = jsonSerializer as Serializer<T>): CacheClient<T> {
  const deadlineMs = settings.deadlineMs ?? 2000;
  const retries = settings.retries ?? 2;
  const Constructor = cacheServiceClient();
  const client = new Constructor(normalizeAddress(settings.address), settings.credentials ?? grpcCredentials.createInsecure()) as unknown as Client & Record<Method, Unary>;

  const attempt = (method: Method, request: Partial<CacheRequest>, deadline: Date): Promise<CacheResponse> =>
    new Promise((resolve, reject) => {
      client[method](request, new Metadata(), { deadline }, (err, response) => (err ? reject(err) : resolve(response!)));
    });

  async function call(method: Method, request: Partial<CacheRequest>): Promise<CacheResponse> {
    const deadline = new Date(Date.now() + deadlineMs);
    for (let attemptNo = 0; ; attemptNo++) {
      try {
        return await attempt(method, request, deadline);
      } catch (err) {
        const serviceError = err as ServiceError;
        const backoff = 50 * 2 ** attemptNo;
        if (!RETRYABLE.has(serviceError.code) || attemptNo >= retries || Date.now() + backoff >= deadline.getTime()) throw toAppError(serviceError);
        await sleep(backoff);
      }
    }
  }

  return {
    async get(key) {
      const response = await call('Get', { key });
      return response.found ? serializer.deserialize(response.value) : undefined;
    },
    async set(key, value, ttlMs = 0) {
      await call('Set', { key, value: serializer.serialize(value), ttlMs });
    },
    async remove(key) {
      return (await call('Remove', { key })).found;
    },
    close: () => client.close(),
  };
}
