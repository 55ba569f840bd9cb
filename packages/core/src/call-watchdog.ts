import { STALL_MS } from './deadline.js';

export interface CallWatchdogOptions {
  /** Names the calls in the error: `${what} timed out after ${ms} ms`. */
  what?: string;
  /** Runs once per verdict, just before the calls in flight fail: abandons what they share (a connection). */
  onTimeout?: () => void;
}

/** Calls under one watchdog: what `withDeadline` gives one call, for many calls at one timer's cost. */
export interface CallWatchdog {
  /** `call()`'s promise, or a rejection `[what ]timed out after {ms} ms` when a call in flight has waited `ms`. */
  watch<T>(call: () => Promise<T>): Promise<T>;
}

/** A call in flight, in a list of its own links (no Map or Set churned per call: see docs/benchmarks.md). */
interface Watched {
  readonly since: number;
  readonly fail: (err: Error) => void;
  older: Watched | undefined;
  newer: Watched | undefined;
}

/**
 * One timer for the calls on a shared resource (a connection), instead of a timer and a race per
 * call: the calls in flight are kept oldest first, and an interval (a quarter of `ms`, unref'd)
 * looks at the oldest. Once a call has waited `ms`, `onTimeout` abandons the resource and every
 * call in flight fails with it (they share its fate). A call is failed after `ms` to `ms * 1.25`,
 * against `withDeadline`'s `ms`. The interval stops at a tick that finds no call in flight and
 * starts again with the next call (at most one timer per quarter of `ms`), so an idle watchdog
 * holds no timer and needs no closing.
 *
 * A stall of this process is not held against the calls, as `withDeadline` has it: when the
 * interval fires more than STALL_MS late, the calls in flight get `ms` again from then, once (a
 * call already given its time again is judged, not extended again); and the verdict is taken in the
 * next check phase (`setImmediate`), after the poll phase has read the answers that came meanwhile.
 * The oldest call is judged, not the time since an answer last came: calls may be answered out of
 * order (a Redis Cluster's nodes), and answers from elsewhere must not hide a call that gets none.
 */
export function createCallWatchdog(ms: number, options: CallWatchdogOptions = {}): CallWatchdog {
  let oldest: Watched | undefined;
  let newest: Watched | undefined;
  /** The calls in flight at the last late tick have waited since then. */
  let graceFrom = -Infinity;
  let verdict: NodeJS.Immediate | undefined;
  const period = Math.max(1, ms / 4);
  let timer: NodeJS.Timeout | undefined;
  let due = 0;

  const remove = (call: Watched): void => {
    if (call.older === undefined && oldest !== call) return; // failed by a verdict already
    if (call.older === undefined) oldest = call.newer;
    else call.older.newer = call.newer;
    if (call.newer === undefined) newest = call.older;
    else call.newer.older = call.older;
    call.older = call.newer = undefined;
  };
  const waited = (call: Watched, now: number): number => now - Math.max(call.since, graceFrom);
  const judge = (): void => {
    verdict = undefined;
    if (oldest === undefined || waited(oldest, performance.now()) < ms) return;
    options.onTimeout?.();
    const message = `${options.what === undefined ? '' : `${options.what} `}timed out after ${ms} ms`;
    for (let call = oldest; call !== undefined; call = oldest) {
      remove(call);
      call.fail(new Error(message));
    }
  };
  const tick = (): void => {
    const now = performance.now();
    const late = now - due > STALL_MS;
    due = now + period;
    if (oldest === undefined) {
      clearInterval(timer);
      timer = undefined;
      return;
    }
    if (late && oldest.since >= graceFrom) graceFrom = now;
    else if (waited(oldest, now) >= ms) verdict ??= setImmediate(judge);
  };
  const start = (): void => {
    due = performance.now() + period;
    timer = setInterval(tick, period);
    timer.unref();
  };

  return {
    watch: <T>(call: () => Promise<T>): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        const watched: Watched = { since: performance.now(), fail: reject, older: undefined, newer: undefined };
        call().then(
          (value) => {
            remove(watched);
            resolve(value);
          },
          (err: Error) => {
            remove(watched);
            reject(err);
          },
        );
        // Listed only once `call()` has not thrown (a throw rejects this promise, and nothing waits).
        watched.older = newest;
        if (newest === undefined) oldest = watched;
        else newest.newer = watched;
        newest = watched;
        if (timer === undefined) start();
      }),
  };
}
