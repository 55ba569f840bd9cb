import { HANG_GUARD_MS, STALL_MS, stallClock, type ProgressBound } from './progress.js';

/** When a wait has gone on too long: after a fixed time, or (ProgressBound) once progress stalled or the work is gone. */
function waitLimit(bound: number | ProgressBound): { exceeded(): Promise<string | undefined>; pollMs: number } {
  const began = Date.now();
  if (typeof bound === 'number') return { pollMs: 20, exceeded: () => Promise.resolve(Date.now() - began > bound ? `within ${bound} ms` : undefined) };
  const clock = stallClock(bound.progress);
  const { stallMs = STALL_MS, hangGuardMs = HANG_GUARD_MS } = bound;
  return {
    pollMs: 100,
    async exceeded() {
      const gone = bound.gone?.();
      if (gone !== undefined) return `: ${gone}`;
      if ((await clock.stalledMs()) > stallMs) return `: no progress for ${stallMs} ms (progress: ${clock.last()})`;
      return Date.now() - began > hangGuardMs ? `within the hang guard of ${hangGuardMs} ms` : undefined;
    },
  };
}

/**
 * Polls until `check` returns a value other than undefined/false (throw from `check` to say why it
 * is not there yet). `bound` is either a number of ms — for what must happen within that time (a
 * logout reaching every replica in 2 s) — or a ProgressBound, for work whose duration depends on
 * how busy the machine is (3,000 registrations): it goes on while `progress` changes, and fails
 * once it has not changed for `stallMs`, or at once when `gone` names a reason. The failure names
 * the last value or error seen.
 */
export async function eventually<T>(check: () => T | undefined | false | Promise<T | undefined | false>, bound: number | ProgressBound = 10_000, what = 'condition'): Promise<T> {
  const limit = waitLimit(bound);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    const exceeded = await limit.exceeded();
    if (exceeded !== undefined) throw new Error(`${what} not met${exceeded.startsWith(':') ? '' : ' '}${exceeded} (last: ${String(last)})`);
    await new Promise((resolve) => setTimeout(resolve, limit.pollMs));
  }
}

/** Resolves after `ms`. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
