import { backoffDelay } from '@sp/core';

/** `change`: an informer event, served first. `resync`: background re-checks, served when no change waits. */
export type Priority = 'change' | 'resync';

export interface WorkQueueOptions {
  /** Handles one key; a rejection retries the key after a backoff. */
  process(key: string, priority: Priority): Promise<void>;
  /** Called with the error when `process` rejects, and the delay before the retry. */
  onError?(key: string, err: unknown, retryInMs: number): void;
  /** Keys handled at the same time (never the same key twice at once). One is kept for changes. */
  concurrency: number;
  backoff: { baseMs: number; maxMs: number };
}

export interface WorkQueue {
  /** Queues the key unless it is queued already (repeated events coalesce); a change overtakes a queued resync of the key. */
  add(key: string, priority?: Priority): void;
  /** Starts handing keys to `process`; keys added before wait until then. */
  start(): void;
  /** Stops handing out keys, drops pending retries, waits for the keys in progress. */
  stop(): Promise<void>;
  /** Keys waiting: queued now or waiting for a retry. */
  depth(): number;
  /** Resolves when nothing is queued, in progress or waiting for a retry (tests). */
  idle(): Promise<void>;
}

/** A FIFO of keys with O(1) take (Array#shift is O(n): a resync queues every key). */
class Fifo {
  private items: string[] = [];
  private head = 0;
  get size(): number {
    return this.items.length - this.head;
  }
  push(key: string): void {
    this.items.push(key);
  }
  take(): string | undefined {
    const key = this.items[this.head];
    this.head += 1;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

/**
 * A keyed work queue after client-go's workqueue, with two priorities: a key is never handled by
 * two workers at once; a key added while it is being handled is handled once more afterwards; a
 * failing key is retried with capped exponential backoff on its own timer, so it never holds up
 * the other keys. Changes are always taken before resync work, and resync work never takes the
 * last worker, so a change waits for no more than one reconcile whatever a resync has queued.
 * Resync keys are handed out one macrotask apart, so informer events keep arriving meanwhile.
 */
export function createWorkQueue(options: WorkQueueOptions): WorkQueue {
  const queues: Record<Priority, Fifo> = { change: new Fifo(), resync: new Fifo() };
  /** Keys waiting to be handled, with the highest priority asked for. */
  const dirty = new Map<string, Priority>();
  const inProgress = new Map<string, Promise<void>>();
  const retries = new Map<string, NodeJS.Timeout>();
  const failures = new Map<string, number>();
  const idleWaiters = new Set<() => void>();
  const resyncSlots = Math.max(1, options.concurrency - 1);
  let resyncRunning = 0;
  let running = false;
  let pumpScheduled = false;

  const checkIdle = (): void => {
    if (dirty.size > 0 || inProgress.size > 0 || retries.size > 0) return;
    for (const wake of idleWaiters) wake();
    idleWaiters.clear();
  };

  const scheduleRetry = (key: string, err: unknown, priority: Priority): void => {
    const count = (failures.get(key) ?? 0) + 1;
    failures.set(key, count);
    const delay = backoffDelay(count, options.backoff.baseMs, options.backoff.maxMs);
    options.onError?.(key, err, delay);
    if (dirty.has(key) || !running) return; // a newer event runs it again anyway
    const timer = setTimeout(() => {
      retries.delete(key);
      add(key, priority);
    }, delay);
    timer.unref();
    retries.set(key, timer);
  };

  const finish = (key: string, priority: Priority): void => {
    inProgress.delete(key);
    if (priority === 'resync') resyncRunning -= 1;
    const again = dirty.get(key);
    if (again) queues[again].push(key);
    pump();
    checkIdle();
  };

  const run = (key: string, priority: Priority): void => {
    dirty.delete(key);
    if (priority === 'resync') resyncRunning += 1;
    const work = options
      .process(key, priority)
      .then(
        () => void failures.delete(key),
        (err: unknown) => scheduleRetry(key, err, priority),
      )
      .finally(() => finish(key, priority));
    inProgress.set(key, work);
  };

  /** The next key of the queue still waiting at that priority (entries of keys handled or promoted since are skipped). */
  const next = (priority: Priority): string | undefined => {
    const queue = queues[priority];
    while (queue.size > 0) {
      const key = queue.take()!;
      if (dirty.get(key) === priority && !inProgress.has(key)) return key;
    }
    return undefined;
  };

  function pump(): void {
    while (running && inProgress.size < options.concurrency) {
      const key = next('change');
      if (key === undefined) break;
      run(key, 'change');
    }
    if (running && queues.resync.size > 0 && resyncRunning < resyncSlots && inProgress.size < options.concurrency && !pumpScheduled) {
      pumpScheduled = true;
      setImmediate(() => {
        pumpScheduled = false;
        if (!running || resyncRunning >= resyncSlots || inProgress.size >= options.concurrency) return;
        const key = next('resync');
        if (key !== undefined) run(key, 'resync');
        pump();
      });
    }
  }

  function add(key: string, priority: Priority = 'change'): void {
    const retry = retries.get(key);
    if (retry) {
      clearTimeout(retry);
      retries.delete(key);
    }
    const queued = dirty.get(key);
    if (queued === 'change' || queued === priority) return;
    dirty.set(key, priority);
    if (!inProgress.has(key)) queues[priority].push(key);
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
