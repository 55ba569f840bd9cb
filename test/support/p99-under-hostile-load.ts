import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
/** What p99UnderHostileLoad measured. */
export interface HostileLoadFigures {
  /** p99 of the other callers' latencies, in ms, while the hostile requests ran. */
  p99Ms: number;
  maxMs: number;
  /** How many other-caller requests were measured. */
  calls: number;
  /** How many hostile requests completed meanwhile. */
  hostileCalls: number;
  /** Every measured latency (ms), sorted: to pool several rounds. */
  latencies: number[];
}

export interface HostileLoadOptions {
  /** One request of another caller; resolves when answered (and checked). */
  victim: () => Promise<unknown>;
  /** One of the most expensive requests, by index (so a test can rotate through several kinds). */
  hostile: (i: number) => Promise<unknown>;
  /** Other-caller requests to measure; default 200. */
  calls?: number;
  /** Other callers in flight at once; default 2. */
  victimConcurrency?: number;
  /** Hostile requests in flight at once, for as long as the measurement runs; default 2. */
  hostileConcurrency?: number;
}

/** The 99th percentile of sorted latencies. */
export const p99 = (sorted: readonly number[]): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;

/**
 * The p99 of the other callers with and without the hostile requests, in alternating rounds so
 * that the machine's own load (shared by many processes) weighs on both alike. On a busy machine
 * the baseline alone can be far above an idle one's; what the hostile requests add is their cost.
 */
export async function p99WithAndWithoutHostileLoad(options: HostileLoadOptions & { rounds?: number }): Promise<{ baselineP99Ms: number; hostileP99Ms: number; hostileCalls: number; calls: number }> {
  const baseline: number[] = [];
  const hostile: number[] = [];
  let hostileCalls = 0;
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    baseline.push(...(await p99UnderHostileLoad({ ...options, hostile: () => new Promise((resolve) => setTimeout(resolve, 20)) })).latencies);
    const figures = await p99UnderHostileLoad(options);
    hostile.push(...figures.latencies);
    hostileCalls += figures.hostileCalls;
  }
  const sorted = (values: number[]): number[] => values.sort((a, b) => a - b);
  return {
    baselineP99Ms: Number(p99(sorted(baseline)).toFixed(1)),
    hostileP99Ms: Number(p99(sorted(hostile)).toFixed(1)),
    hostileCalls,
    calls: hostile.length,
  };
}

/**
 * The "worst request" check: keeps the hostile requests running without pause and measures the
 * other callers meanwhile. The hostile ones start first and keep going until the last other
 * caller is answered, so every measured request competes with them. A failing request of either
 * kind fails the run.
 */
export async function p99UnderHostileLoad(options: HostileLoadOptions): Promise<HostileLoadFigures> {
  const calls = options.calls ?? 200;
  const latencies: number[] = [];
  let stop = false;
  let hostileCalls = 0;
  let hostileFailure: Error | undefined;
  const hostileWorker = async (): Promise<void> => {
    while (!stop) await options.hostile(hostileCalls++);
  };
  const hostile = Array.from({ length: options.hostileConcurrency ?? 2 }, () =>
    hostileWorker().catch((err: unknown) => {
      hostileFailure ??= err instanceof Error ? err : new Error(String(err));
    }),
  );
  let issued = 0;
  const victimWorker = async (): Promise<void> => {
    while (issued < calls) {
      issued++;
      const started = performance.now();
      await options.victim();
      latencies.push(performance.now() - started);
    }
  };
  try {
    // Let the hostile requests get going before measuring.
    await new Promise((resolve) => setTimeout(resolve, 200));
    await Promise.all(Array.from({ length: options.victimConcurrency ?? 2 }, () => victimWorker()));
  } finally {
    stop = true;
    await Promise.all(hostile);
  }
  if (hostileFailure !== undefined) throw hostileFailure;
  const sorted = [...latencies].sort((a, b) => a - b);
  return { p99Ms: Number(p99(sorted).toFixed(1)), maxMs: Number((sorted.at(-1) ?? 0).toFixed(1)), calls: sorted.length, hostileCalls, latencies: sorted };
}

/** A request of the hostile side, prepared in full (signed) so that the worker only sends it. */
export interface PreparedRequest {
  name: string;
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  /** The status it must be answered with. */
  status: number;
}

const workerPath = new URL('./hostile-requests-worker.mjs', import.meta.url);

/**
 * Hostile requests sent back to back from a worker thread (an event loop of their own, as a
 * hostile client is another machine), for use as the `hostile` side of p99UnderHostileLoad: start
 * returns a function that stops the worker and resolves how many were sent, rejecting when one
 * was answered with another status than prepared.
 */
export function startHostileWorker(requests: readonly PreparedRequest[], concurrency = 1): () => Promise<number> {
  const worker = new Worker(workerPath, { workerData: { requests, concurrency } });
  const result = once(worker, 'message') as Promise<[{ sent: number; failure?: string }]>;
  return async () => {
    worker.postMessage('stop');
    const [{ sent, failure }] = await result;
    await worker.terminate();
    if (failure !== undefined) throw new Error(`a hostile request failed: ${failure}`);
    return sent;
  };
}

/**
 * p99WithAndWithoutHostileLoad with the hostile requests sent from a worker thread: rounds of the
 * other callers alone and with the worker sending, alternately.
 */
export async function p99WithAndWithoutHostileWorker(options: {
  victim: () => Promise<unknown>;
  requests: readonly PreparedRequest[];
  calls?: number;
  victimConcurrency?: number;
  hostileConcurrency?: number;
  rounds?: number;
}): Promise<{ baselineP99Ms: number; hostileP99Ms: number; hostileCalls: number; calls: number }> {
  const idle = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
  const baseline: number[] = [];
  const hostile: number[] = [];
  let hostileCalls = 0;
  for (let round = 0; round < (options.rounds ?? 3); round++) {
    baseline.push(...(await p99UnderHostileLoad({ ...options, hostile: idle, hostileConcurrency: 1 })).latencies);
    const stop = startHostileWorker(options.requests, options.hostileConcurrency ?? 1);
    try {
      hostile.push(...(await p99UnderHostileLoad({ ...options, hostile: idle, hostileConcurrency: 1 })).latencies);
    } finally {
      hostileCalls += await stop();
    }
  }
  const sorted = (values: number[]): number[] => values.sort((a, b) => a - b);
  return { baselineP99Ms: Number(p99(sorted(baseline)).toFixed(1)), hostileP99Ms: Number(p99(sorted(hostile)).toFixed(1)), hostileCalls, calls: hostile.length };
}
