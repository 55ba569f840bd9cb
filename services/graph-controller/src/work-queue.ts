import { backoffDelay } from '@sp/platform';

export interface WorkQueueOptions {
  /** Handles one key; a rejection retries the key after a backoff. */
  process(key: string): Promise<void>;
  /** Called with the error when `process` rejects, and the delay before the retry. */
  onError?(key: string, err: unknown, retryInMs: number): void;
  /** Keys handled at the same time (never the same key twice at once). */
  concurrency: number;
  backoff: { baseMs: number; maxMs: number };
}

export interface WorkQueue {
  /** Queues the key unless it is queued already (repeated events coalesce). */
  add(key: string): void;
  /** Starts handing keys to `process`; keys added before wait until then. */
  start(): void;
  /** Stops handing out keys, drops pending retries, waits for the keys in progress. */
  stop(): Promise<void>;
  /** Keys waiting: queued now or waiting for a retry. */
  depth(): number;
  /** Resolves when nothing is queued, in progress or waiting for a retry (tests). */
  idle(): Promise<void>;
}

/**
 * A keyed work queue after client-go's workqueue: a key is never handled by two workers at once; a
 * key added while it is being handled is handled once more afterwards; a failing key is retried
 * with capped exponential backoff on its own timer, so it never holds up the other keys.
 */
export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const ready: string[] = [];
  /** Keys waiting to be handled (in `ready`, or re-added while in progress). */
  const dirty = new Set<string>();
  const inProgress = new Map<string, Promise<void>>();
  const retries = new Map<string, NodeJS.Timeout>();
  const failures = new Map<string, number>();
  const idleWaiters = new Set<() => void>();
  let running = false;

  const checkIdle = (): void => {
    if (dirty.size > 0 || inProgress.size > 0 || retries.size > 0) return;
    for (const wake of idleWaiters) wake();
    idleWaiters.clear();
  };

  const scheduleRetry = (key: string, err: unknown): void => {
    const count = (failures.get(key) ?? 0) + 1;
    failures.set(key, count);
    const delay = backoffDelay(count, options.backoff.baseMs, options.backoff.maxMs);
    options.onError?.(key, err, delay);
    if (dirty.has(key) || !running) return; // a newer event runs it again anyway
    const timer = setTimeout(() => {
      retries.delete(key);
      add(key);
    }, delay);
    timer.unref();
    retries.set(key, timer);
  };

  const finish = (key: string): void => {
    inProgress.delete(key);
    if (dirty.has(key)) ready.push(key);
    pump();
    checkIdle();
  };

  const run = (key: string): void => {
    dirty.delete(key);
    const work = options
      .process(key)
      .then(
        () => void failures.delete(key),
        (err: unknown) => scheduleRetry(key, err),
      )
      .finally(() => finish(key));
    inProgress.set(key, work);
  };

  function pump(): void {
    while (running && inProgress.size < options.concurrency && ready.length > 0) {
      const key = ready.shift()!;
      if (inProgress.has(key)) continue; // handled again by finish()
      run(key);
    }
  }

  function add(key: string): void {
    const retry = retries.get(key);
    if (retry) {
      clearTimeout(retry);
      retries.delete(key);
    }
    if (dirty.has(key)) return;
    dirty.add(key);
    if (!inProgress.has(key)) ready.push(key);
    pump();
  }

  return {
    add,
    start() {
      running = true;
      pump();
    },
    async stop() {
      running = false;
      for (const timer of retries.values()) clearTimeout(timer);
      retries.clear();
      await Promise.allSettled(inProgress.values());
      checkIdle();
    },
    depth: () => dirty.size + retries.size,
    idle: () =>
      new Promise<void>((resolve) => {
        idleWaiters.add(resolve);
        checkIdle();
      }),
  };
}
