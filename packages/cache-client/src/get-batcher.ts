import { status, type ServiceError } from '@grpc/grpc-js';
import { AppError } from '@sp/core';
import type { CacheResponse__Output } from './generated/cache/v1/CacheResponse.js';

/** The most keys one GetMany carries (the contract's limit). */
export const MAX_BATCH_KEYS = 1000;

export interface GetBatcher {
  get(key: string): Promise<CacheResponse__Output>;
}

/** The callers waiting for one key's answer: each get of the key made in the same turn. */
interface Waiting {
  key: string;
  callers: Array<{ resolve: (response: CacheResponse__Output) => void; reject: (err: unknown) => void }>;
}

/** The gRPC status behind a client error (fromServiceError keeps the ServiceError as its cause). */
const grpcCode = (err: unknown): number | undefined => (err instanceof AppError && err.cause instanceof Error ? (err.cause as Partial<ServiceError>).code : undefined);

/**
 * Coalesces gets, as ioredis' auto-pipelining does commands: the gets made during one turn of the
 * event loop (all the callers a burst of requests woke) leave together as one GetMany when there
 * are several keys, or as one Get when there is one. One call instead of N saves each side the
 * per-call work of gRPC and HTTP/2 (headers, stream, status, promise plumbing), which dominates a
 * small read.
 *
 * Gets of the same key in one turn are one read, as DataLoader batches them: the key goes out once
 * and every caller gets that answer (the same response object; its bytes are shared). Only gets
 * not yet sent are joined: a get never takes the answer of a read that left before it was made, so
 * it never sees a value older than its own start (a removal acknowledged before a get began is
 * never undone by this).
 *
 * A batch refused for any reason but unavailability is retried key by key, so one bad key cannot
 * fail its neighbours' gets; a service without GetMany (before contract 1.2: UNIMPLEMENTED) turns
 * batching off for good.
 */
export function createGetBatcher(single: (key: string) => Promise<CacheResponse__Output>, many: (keys: string[]) => Promise<CacheResponse__Output[]>): GetBatcher {
  let queue = new Map<string, Waiting>();
  let batching = true;

  const resolveAll = (waiting: Waiting, response: CacheResponse__Output): void => {
    for (const caller of waiting.callers) caller.resolve(response);
  };
  const rejectAll = (waiting: Waiting, err: unknown): void => {
    for (const caller of waiting.callers) caller.reject(err);
  };

  const oneByOne = (batch: readonly Waiting[]): void => {
    for (const waiting of batch)
      single(waiting.key).then(
        (response) => resolveAll(waiting, response),
        (err: unknown) => rejectAll(waiting, err),
      );
  };

  function send(batch: Waiting[]): void {
    if (batch.length === 1 || !batching) return oneByOne(batch);
    many(batch.map((waiting) => waiting.key)).then(
      (entries) => batch.forEach((waiting, i) => resolveAll(waiting, entries[i]!)),
      (err: unknown) => {
        if (err instanceof AppError && err.status === 503) return batch.forEach((waiting) => rejectAll(waiting, err));
        if (grpcCode(err) === status.UNIMPLEMENTED) batching = false;
        oneByOne(batch);
      },
    );
  }

  function flush(): void {
    const batch = [...queue.values()];
    queue = new Map();
    for (let from = 0; from < batch.length; from += MAX_BATCH_KEYS) send(batch.slice(from, from + MAX_BATCH_KEYS));
  }

  return {
    get: (key) =>
      new Promise((resolve, reject) => {
        const waiting = queue.get(key);
        if (waiting !== undefined) return void waiting.callers.push({ resolve, reject });
        queue.set(key, { key, callers: [{ resolve, reject }] });
        if (queue.size === 1) setImmediate(flush);
      }),
  };
}
