/** How often the server's sweep ticks the clock (and checks the limits measured in seconds). */
export const TICK_MS = 1000;

/**
 * Milliseconds as of the server's last sweep: what limits measured in seconds (idle, age, write and
 * stream timeouts) read on the paths of every call and every DATA frame, where reading the system
 * clock each time would cost more than the check. A time taken from it is up to a tick early.
 */
export class CoarseClock {
  now = Date.now();

  tick(): number {
    this.now = Date.now();
    return this.now;
  }

  /** The time that has surely passed since `stamp` (taken from this clock): a limit checked with it never acts early. */
  since(stamp: number): number {
    return this.now - stamp - TICK_MS;
  }
}
