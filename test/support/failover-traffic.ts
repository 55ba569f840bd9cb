import { eventually, sleep } from './eventually.js';

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

/** What a failover under traffic looked like: every call's outcome, and when the kill and recovery happened. */
export interface FailoverRun {
  outcomes: CallOutcome[];
  killedAt: number;
  /** When the set reported itself healthy again (a promoted replica serving). */
  healthyAt: number;
}

export interface FailoverUnderTraffic {
  /** The call the clients keep making. */
  call: (n: number) => Promise<unknown>;
  /** SIGKILLs the primary; the run does it after 200 ms of traffic. */
  kill: () => Promise<void>;
  waitUntilHealthy: () => Promise<void>;
  /** Resolves truthy once the service serves the acknowledged state again, by itself. */
  recovered: () => Promise<unknown>;
  /** Names `recovered` in the timeout message. */
  what: string;
}

/**
 * Runs traffic, kills the primary, waits for the set to be healthy and the service to serve again
 * (no restart, no new client), lets traffic run 300 ms more, and returns what every call met.
 */
export async function failoverUnderTraffic(run: FailoverUnderTraffic): Promise<FailoverRun> {
  const traffic = startTraffic(run.call);
  await sleep(200);
  const killedAt = Date.now();
  let healthyAt = Number.POSITIVE_INFINITY;
  const outcomes: CallOutcome[] = [];
  try {
    await run.kill();
    await run.waitUntilHealthy();
    healthyAt = Date.now();
    await eventually(run.recovered, 10_000, run.what);
    await sleep(300);
  } finally {
    outcomes.push(...(await traffic.stop()));
  }
  return { outcomes, killedAt, healthyAt };
}
