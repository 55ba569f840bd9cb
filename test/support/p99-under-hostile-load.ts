/** What p99UnderHostileLoad measured. */
export interface HostileLoadFigures {
  /** p99 of the other callers' latencies, in ms, while the hostile requests ran. */
  p99Ms: number;
  maxMs: number;
  /** How many other-caller requests were measured. */
  calls: number;
  /** How many hostile requests completed meanwhile. */
  hostileCalls: number;
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

const p99 = (sorted: readonly number[]): number => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * 0.99))] ?? 0;

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
  return { p99Ms: Number(p99(sorted).toFixed(1)), maxMs: Number((sorted.at(-1) ?? 0).toFixed(1)), calls: sorted.length, hostileCalls };
}
