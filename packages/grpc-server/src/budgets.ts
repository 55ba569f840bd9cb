/**
 * What a connection may always hold whatever the process' budget says: a Get and its answer, a
 * health check. A flood on other connections that fills the process' budget then refuses only
 * large messages, never every caller; in all, this is bounded by the connection limit times this.
 */
export const CONNECTION_RESERVE_BYTES = 64 * 1024;

/**
 * The process' budget of bytes held for calls: request messages being assembled or handled,
 * request headers, and answers written but not yet sent (their client reads slowly or not at all).
 */
export class ProcessBudget {
  used = 0;

  constructor(readonly limit: number) {}
}

/**
 * One connection's share: its own limit, and the process' beneath it. What does not fit is refused
 * (a new stream with REFUSED_STREAM, a message or an answer with RESOURCE_EXHAUSTED) instead of
 * memory growing; whatever clients send, the bytes held stay under the process' limit plus the
 * connections' reserves.
 */
export class ConnectionBudget {
  used = 0;

  constructor(
    private readonly process: ProcessBudget,
    readonly limit: number,
  ) {}

  /** Whether `bytes` more fit: within the connection's limit, and within the process' unless the connection is within its reserve. */
  fits(bytes: number): boolean {
    const used = this.used + bytes;
    if (used > this.limit) return false;
    return used <= CONNECTION_RESERVE_BYTES || this.process.used + bytes <= this.process.limit;
  }

  /** Reserves `bytes` when they fit; false otherwise (nothing reserved). */
  take(bytes: number): boolean {
    if (!this.fits(bytes)) return false;
    this.used += bytes;
    this.process.used += bytes;
    return true;
  }

  /** Charges `bytes` whether or not they fit (data already in memory, such as an answer being written). */
  charge(bytes: number): void {
    this.used += bytes;
    this.process.used += bytes;
  }

  release(bytes: number): void {
    this.used -= bytes;
    this.process.used -= bytes;
  }
}
