import { setTimeout as sleepFor } from 'node:timers/promises';

export interface PollOptions {
  /** How long to keep trying, from the first try; a try that has begun always finishes. */
  waitMs: number;
  /** The pause between two tries. */
  pollMs: number;
  /** The clock, Unix ms. */
  now?: () => number;
  /** Waits `ms`. */
  sleep?: (ms: number) => Promise<unknown>;
}

/**
 * Tries `attempt` (told how many tries came before) until it gives something other than
 * undefined, pausing `pollMs` between tries, for up to `waitMs`; undefined when the time ran out.
 * The one wait-and-try-again loop of the services: for a lock, a claim held by a concurrent
 * delivery, a store coming back after a failover. What a give-up means (503, 409, go on without)
 * is the caller's.
 */
export async function poll<T>(attempt: (tries: number) => Promise<T | undefined>, options: PollOptions): Promise<T | undefined> {
  const now = options.now ?? Date.now;
  const sleep = options.sleep ?? sleepFor;
  const deadline = now() + options.waitMs;
  for (let tries = 0; ; tries++) {
    const result = await attempt(tries);
    if (result !== undefined) return result;
    if (now() >= deadline) return undefined;
    await sleep(options.pollMs);
  }
}
