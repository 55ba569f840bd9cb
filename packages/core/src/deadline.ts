export interface DeadlineOptions {
  /** Names the work in the error: `${what} timed out after ${ms} ms`. */
  what?: string;
  /** Runs just before the rejection, to abandon the work. */
  onTimeout?: () => void;
  /** A wall-clock budget (shutdown): a stall of this process counts against it. */
  hard?: boolean;
}

/** A timer this late means the process itself was stalled (a timer on a busy machine is a few ms late). */
export const STALL_MS = 50;

/**
 * `promise`, or a rejection `[what ]timed out after {ms} ms` once `ms` have passed, whichever comes
 * first. The timer is dropped as soon as the promise settles and does not keep the process alive
 * by itself. The one timeout race of the services (readiness checks, publishes, shutdown waits);
 * calls that share a connection share one watchdog instead (`createCallWatchdog`: Redis replies).
 *
 * A deadline waits for an answer, so the time this process could not listen is not held against
 * it. Timers run before the event loop's poll phase, so when the process stalls past `ms` (a long
 * garbage collection, a CPU-throttled container, a busy machine) the timer would fire before an
 * answer that came during the stall is read, or before a request delayed by the stall was even
 * sent. So: when the timer fires later than STALL_MS after it was due, the work gets `ms` again,
 * once, from then; and the verdict waits for the next check phase (`setImmediate`), after the poll
 * phase has read whatever came. `hard` deadlines are wall-clock budgets (shutdown), kept as set.
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, options: DeadlineOptions = {}): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let verdict: NodeJS.Immediate | undefined;
  const deadline = new Promise<never>((_, reject) => {
    const expire = (): void => {
      options.onTimeout?.();
      reject(new Error(`${options.what === undefined ? '' : `${options.what} `}timed out after ${ms} ms`));
    };
    const arm = (extended: boolean): void => {
      const due = performance.now() + ms;
      timer = setTimeout(() => {
        if (options.hard === true) return expire();
        if (!extended && performance.now() - due > STALL_MS) return arm(true);
        verdict = setImmediate(expire);
      }, ms);
      timer.unref();
    };
    arm(false);
  });
  return Promise.race([promise, deadline]).finally(() => {
    clearTimeout(timer);
    clearImmediate(verdict);
  });
}
