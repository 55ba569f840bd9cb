/**
 * How often a client may do something cheap for it and costly for the server (a token bucket):
 * `burst` at once, then `perSecond`. Node runs a connection's frames in bursts (a read of up to
 * 32 x 64 KiB at a time) during which nothing else is served, so whatever makes such a burst
 * expensive is limited per connection, and a connection past its allowance is closed.
 */
export class Allowance {
  private tokens: number;
  private filledAt = Date.now();

  constructor(
    private readonly burst: number,
    private readonly perSecond: number,
  ) {
    this.tokens = burst;
  }

  /** Counts one; false once the client goes faster than the allowance. */
  take(): boolean {
    const now = Date.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.filledAt) * this.perSecond) / 1000);
    this.filledAt = now;
    if (this.tokens < 1) return false;
    this.tokens--;
    return true;
  }
}

/**
 * Calls a client may cancel (RST_STREAM before the server ended them): nghttp2's defaults for its
 * own rapid-reset limit, 1000 then 33/s (CVE-2023-44487: streams opened and reset as fast as a
 * client can write them).
 */
export const resetAllowance = (): Allowance => new Allowance(1000, 33);

/**
 * DATA frames under 1 KiB that leave a message unfinished: a message sent a byte a frame costs the
 * server several microseconds a frame for nothing. Clients frame messages in chunks of up to 16 KiB
 * (a short piece ends a message, or holds a prefix split by a frame boundary), so 1000, then 100 a
 * second, is far more than any of them sends.
 */
export const smallFrameAllowance = (): Allowance => new Allowance(1000, 100);
