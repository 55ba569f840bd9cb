/**
 * Milliseconds as of the server's last sweep (once a second): what limits measured in seconds
 * (idle, age, write and stream timeouts) read on the paths of every call and every DATA frame,
 * where reading the system clock each time would cost more than the check.
 */
export class CoarseClock {
  now = Date.now();

  tick(): number {
    this.now = Date.now();
    return this.now;
  }
}
