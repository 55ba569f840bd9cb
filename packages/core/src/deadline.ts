export interface DeadlineOptions {
  /** Names the work in the error: `${what} timed out after ${ms} ms`. */
  what?: string;
  /** Runs just before the rejection, to abandon the work. */
  onTimeout?: () => void;
}

/**
 * `promise`, or a rejection `[what ]timed out after {ms} ms` once `ms` have passed, whichever comes
 * first. The timer is dropped as soon as the promise settles and does not keep the process alive
 * by itself. The one timeout race of the services (readiness checks, publishes, shutdown waits).
 */
export function withDeadline<T>(promise: Promise<T>, ms: number, options: DeadlineOptions = {}): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      options.onTimeout?.();
      reject(new Error(`${options.what === undefined ? '' : `${options.what} `}timed out after ${ms} ms`));
    }, ms);
    timer.unref();
  });
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer));
}
