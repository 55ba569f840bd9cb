import { once } from 'node:events';
import { Cluster, type Redis } from 'ioredis';
import { AppError, createCallWatchdog, unavailable, type CallWatchdog } from '@sp/core';

/** Runs one Redis call; its errors come out as AppErrors (503 when Redis is unreachable). */
export type RedisRun = <T>(command: () => Promise<T>) => Promise<T>;

export interface RedisStoreBase {
  run: RedisRun;
  /** The readiness check: a PING through `run` (to every primary of a Cluster). */
  check: () => Promise<void>;
  /** QUIT, or a hard disconnect when the connection is already gone. */
  close: () => Promise<void>;
}

export interface RedisStoreBaseOptions {
  /** The dependency named in 503 answers (`redis`, `store`). */
  dependency?: string;
  /** A store's own meaning of some error replies (e.g. a script's); `undefined` keeps the default 500. */
  mapReplyError?: (err: Error) => Error | undefined;
  /** How long a call waits for a connection being opened (at start, or a reconnect in progress). */
  connectingWaitMs?: number;
  /** How long a call waits for Redis' reply before the connection is taken as hung (DEFAULT_NO_REPLY_TIMEOUT_MS). */
  noReplyTimeoutMs?: number;
}

/** The stores' reply deadline unless a store sets its own: what the services run with. */
export const DEFAULT_NO_REPLY_TIMEOUT_MS = 1000;

/** Statuses (ioredis' public `status`) in which a connection attempt is under way. */
const OPENING = new Set(['wait', 'connecting', 'connect']);

/**
 * Replies that mean "not now" during a failover or resharding. MOVED and ASK reach us when an
 * auto-pipelined batch held commands for slots that just moved (ioredis redirects a batch only
 * when all of it moved the same way); ioredis has refreshed its slot map by then, so a retry works.
 */
const TRANSIENT_REPLY = /^(CLUSTERDOWN|TRYAGAIN|MASTERDOWN|LOADING|READONLY|MOVED|ASK) /;

/**
 * A Redis error reply is a bug or misuse (500) unless the store says otherwise; anything else
 * (refused, closed, socket timeout, cluster down) means Redis is unreachable (503).
 */
export function toRedisStoreError(err: unknown, options: RedisStoreBaseOptions = {}): Error {
  if (err instanceof AppError) return err;
  if (err instanceof Error && err.name === 'ReplyError') {
    if (TRANSIENT_REPLY.test(err.message)) return unavailable(options.dependency ?? 'redis', err);
    return options.mapReplyError?.(err) ?? new AppError(500, 'redis_error', err.message, { cause: err });
  }
  return unavailable(options.dependency ?? 'redis', err);
}

/**
 * Calls on `redis` with a reply deadline, for a Redis that accepts but never answers (hung, or a
 * network partition): once a call has waited `timeoutMs` for its reply, the connection is dropped
 * and opened again, and every call in flight on it fails (`Redis reply timed out after … ms`, a 503
 * through `toRedisStoreError`). One watchdog per client (`createCallWatchdog`: one interval timer,
 * no timer or race per call on the stores' hot path), which decides after reading what came
 * meanwhile, so a stall of this process longer than the timeout does not drop a healthy
 * connection — which ioredis' own `socketTimeout` does (its timer destroys the socket before the
 * reply that came during the stall is read), hence not used.
 *
 * A Cluster client has a connection per node behind one client: the watchdog judges its oldest
 * call in flight, so a hung node is caught while the others keep answering (a watchdog of the time
 * since the last reply would not catch it), and the verdict drops the whole client (every node's
 * connection, and the calls in flight on healthy nodes with them), as a per-call deadline did: the
 * stores cannot tell which node a call went to, and ioredis fetches the slot map again on reconnect.
 */
export function replyWatchdog(redis: Redis | Cluster, timeoutMs: number): CallWatchdog {
  const dropConnection = (): void => {
    // Said as ioredis says a lost connection (logRedisConnectionState logs it); an 'error' with no listener would throw.
    if (redis.listenerCount('error') > 0) redis.emit('error', new Error(`no reply from Redis within ${timeoutMs} ms`));
    redis.disconnect(true);
  };
  return createCallWatchdog(timeoutMs, { what: 'Redis reply', onTimeout: dropConnection });
}

/**
 * What every Redis-backed store shares, for a client made with `connectRedis` (no offline queue):
 * while a connection attempt is in progress a call waits for it briefly (all waiters sharing one
 * wait), so the first requests after a start or during a reconnect do not fail; while Redis is
 * down between attempts a call fails at once. Errors are mapped by `toRedisStoreError`.
 * A call without a reply after `noReplyTimeoutMs` fails, and the connection is dropped
 * (`replyWatchdog`).
 */
export function createRedisStoreBase(redis: Redis | Cluster, options: RedisStoreBaseOptions = {}): RedisStoreBase {
  const waitMs = options.connectingWaitMs ?? 1000;
  const noReplyTimeoutMs = options.noReplyTimeoutMs ?? DEFAULT_NO_REPLY_TIMEOUT_MS;
  let opening: Promise<unknown> | undefined;
  const connected = (): Promise<unknown> | undefined => {
    if (!OPENING.has(redis.status)) return undefined;
    opening ??= once(redis, 'ready', { signal: AbortSignal.timeout(waitMs) }).finally(() => {
      opening = undefined;
    });
    return opening;
  };
  const fail = (err: unknown): never => {
    throw toRedisStoreError(err, options);
  };
  const watchdog = replyWatchdog(redis, noReplyTimeoutMs);
  // Plain promise chaining: this runs once per request, so no extra async frame. The reply's
  // deadline starts when the command is sent, after any wait for the connection.
  const run: RedisRun = <T>(command: () => Promise<T>): Promise<T> => {
    const waiting = connected();
    return (waiting === undefined ? watchdog.watch(command) : waiting.then(() => watchdog.watch(command))).catch(fail);
  };
  return {
    run,
    // On a Cluster every primary answers, so a ready service has a connection to each.
    check: async () => {
      await run(async () => {
        await Promise.all(redis instanceof Cluster ? redis.nodes('master').map((node) => node.ping()) : [redis.ping()]);
      });
    },
    close: async () => {
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
