/** One call made while a dependency was being failed over. */
export interface CallOutcome {
  startedAt: number;
  endedAt: number;
  error?: unknown;
}

export interface Traffic {
  /** Stops issuing calls, waits for those in flight, and returns every outcome in start order. */
  stop(): Promise<CallOutcome[]>;
}

/**
 * Keeps `concurrency` callers busy with `call(n)` (n counts up across callers) until stopped, as
 * clients keep calling while a Redis primary dies; a failed call is recorded, never retried here.
 */
export function startTraffic(call: (n: number) => Promise<unknown>, concurrency = 4): Traffic {
  const outcomes: CallOutcome[] = [];
  let running = true;
  let next = 0;
  const caller = async (): Promise<void> => {
    while (running) {
      const startedAt = Date.now();
      const error = await call(next++).then(
        () => undefined,
        (err: unknown) => err ?? new Error('rejected without a reason'),
      );
      outcomes.push({ startedAt, endedAt: Date.now(), ...(error === undefined ? {} : { error }) });
      // A breath between calls, so a failing dependency does not turn this into a busy loop.
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  };
  const callers = Array.from({ length: concurrency }, caller);
  return {
    async stop() {
      running = false;
      await Promise.all(callers);
      return outcomes.sort((a, b) => a.startedAt - b.startedAt);
    },
  };
}
