/**
 * How many calls a client may cancel (RST_STREAM before the server ended them) at once, and how
 * fast the allowance comes back: nghttp2's defaults for its own rapid-reset limit (1000, 33/s).
 * Node runs a connection's frames in bursts (a read of up to 32 x 64 KiB at a time), during which
 * nothing else is served: a client that opens and resets streams as fast as it can write
 * (CVE-2023-44487) would otherwise hold the whole server for the length of its burst.
 */
const BURST = 1000;
const PER_SECOND = 33;

/** A token bucket of the calls a connection's client may cancel; `take` is false once it is empty. */
export class ResetRate {
  private tokens = BURST;
  private filledAt = Date.now();

  /** Counts one cancelled call; false when the client cancels faster than the allowance. */
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(BURST, this.tokens + ((now - this.filledAt) * PER_SECOND) / 1000);
    this.filledAt = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }
}
