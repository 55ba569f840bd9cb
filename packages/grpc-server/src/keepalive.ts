import type { Http2Session } from 'node:http2';
import type { CoarseClock } from './coarse-clock.js';

/** grpc-go's maxPingStrikes: the third ping too early ends the connection. */
const MAX_PING_STRIKES = 2;
/** grpc-go's defaultPingTimeout: without streams (and without PermitWithoutStream) a ping is due at most every 2 h. */
const PING_INTERVAL_WITHOUT_STREAMS_MS = 2 * 60 * 60_000;

/**
 * gRPC's keepalive enforcement as grpc-go's server has it (http2_server.go, handlePing): a client
 * ping that comes sooner than `minIntervalMs` after the previous one (2 h when the connection has
 * no streams, unless `permitWithoutStream`) is a strike, unless the server sent headers or data
 * since; past two strikes the connection is ended with GOAWAY ENHANCE_YOUR_CALM "too_many_pings",
 * which grpc-go and grpc-js clients take as a cue to double their keepalive interval.
 */
export class PingEnforcement {
  /** Set when the server sends headers or data: the next ping is no strike (grpc-go's resetPingStrikes). */
  sent = false;
  private lastPingAt = Number.NEGATIVE_INFINITY;
  private strikes = 0;

  constructor(
    private readonly minIntervalMs: number,
    private readonly permitWithoutStream: boolean,
  ) {}

  /** A client's ping with `streams` open; true when it was one too many. */
  tooMany(streams: number): boolean {
    const now = Date.now();
    const previous = this.lastPingAt;
    this.lastPingAt = now;
    if (this.sent) {
      this.sent = false;
      this.strikes = 0;
      return false;
    }
    const interval = streams === 0 && !this.permitWithoutStream ? PING_INTERVAL_WITHOUT_STREAMS_MS : this.minIntervalMs;
    if (now - previous < interval) this.strikes++;
    return this.strikes > MAX_PING_STRIKES;
  }
}

/**
 * The server's own keepalive pings: a connection it heard nothing from for `timeMs` is pinged, and
 * one whose ping goes unanswered for `timeoutMs` is half-open (the client's host is gone without a
 * FIN) and is closed, freeing its connection slot and whatever its calls held.
 */
export class KeepaliveProbe {
  /** When the server last heard from the client (a stream, a ping, a ping's answer). */
  heardAt: number;
  private sentAt: number | undefined;

  constructor(
    private readonly session: Http2Session,
    private readonly clock: CoarseClock,
    private readonly timeMs: number,
    private readonly timeoutMs: number,
  ) {
    this.heardAt = clock.now;
  }

  /** Called on each sweep: pings a quiet connection; true once a ping went unanswered too long. */
  overdue(now: number): boolean {
    if (this.timeMs === 0) return false;
    if (this.sentAt !== undefined) return this.clock.since(this.sentAt) >= this.timeoutMs;
    if (this.clock.since(this.heardAt) < this.timeMs) return false;
    this.sentAt = now;
    const sent = this.session.ping((err) => {
      if (err !== null) return;
      this.sentAt = undefined;
      this.heardAt = this.clock.now;
    });
    if (!sent) this.sentAt = undefined;
    return false;
  }
}
