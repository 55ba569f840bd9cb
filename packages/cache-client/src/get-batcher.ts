import { status, type ServiceError } from '@grpc/grpc-js';
import { AppError } from '@sp/platform';
import type { CacheResponse__Output } from './generated/cache/v1/CacheResponse.js';

/** The most keys one GetMany carries (the contract's limit). */
export const MAX_BATCH_KEYS = 1000;

export interface GetBatcher {
  get(key: string): Promise<CacheResponse__Output>;
}

interface Waiting {
  key: string;
  resolve: (response: CacheResponse__Output) => void;
  reject: (err: unknown) => void;
}

/** The gRPC status behind a client error (fromServiceError keeps the ServiceError as its cause). */
const grpcCode = (err: unknown): number | undefined => (err instanceof AppError && err.cause instanceof Error ? (err.cause as Partial<ServiceError>).code : undefined);

/**
 * Coalesces gets, as ioredis' auto-pipelining does commands: the gets made during one turn of the
 * event loop (all the callers a burst of requests woke) leave together as one GetMany when there
 * are several, or as one Get when alone. One call instead of N saves each side the per-call work
 * of gRPC and HTTP/2 (headers, stream, status, promise plumbing), which dominates a small read.
 * A batch refused for any reason but unavailability is retried key by key, so one bad key cannot
 * fail its neighbours' gets; a service without GetMany (before contract 1.2: UNIMPLEMENTED) turns
 * batching off for good.
 */
export function createGetBatcher(single: (key: string) => Promise<CacheResponse__Output>, many: (keys: string[]) => Promise<CacheResponse__Output[]>): GetBatcher {
  let queue: Waiting[] = [];
  let batching = true;

  const oneByOne = (batch: readonly Waiting[]): void => {
    for (const waiting of batch) single(waiting.key).then(waiting.resolve, waiting.reject);
  };

  function send(batch: Waiting[]): void {
    if (batch.length === 1 || !batching) return oneByOne(batch);
    many(batch.map((waiting) => waiting.key)).then(
      (entries) => batch.forEach((waiting, i) => waiting.resolve(entries[i]!)),
      (err: unknown) => {
        if (err instanceof AppError && err.status === 503) return batch.forEach((waiting) => waiting.reject(err));
        if (grpcCode(err) === status.UNIMPLEMENTED) batching = false;
        oneByOne(batch);
      },
    );
  }

  function flush(): void {
    const batch = queue;
    queue = [];
    for (let from = 0; from < batch.length; from += MAX_BATCH_KEYS) send(batch.slice(from, from + MAX_BATCH_KEYS));
  }

  return {
    get: (key) =>
      new Promise((resolve, reject) => {
        queue.push({ key, resolve, reject });
        if (queue.length === 1) setImmediate(flush);
      }),
  };
}
