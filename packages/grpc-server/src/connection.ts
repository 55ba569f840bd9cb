import { constants as h2, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import { ConnectionBudget, type ProcessBudget } from './budgets.js';
import type { CallHost } from './call.js';
import type { CoarseClock } from './coarse-clock.js';
import { CallList, type Listed } from './call-list.js';
import { KeepaliveProbe, PingEnforcement } from './keepalive.js';
import { resetAllowance, smallFrameAllowance } from './allowance.js';
import type { GrpcServerLimits, GrpcServerLogger, LimitName } from './options.js';

/** The stream id of a GOAWAY that announces a shutdown without refusing streams in flight (RFC 9113, 6.8). */
const ANY_STREAM = 2 ** 31 - 1;
/** HTTP/2's initial flow-control window (RFC 9113, 6.9.2). */
const DEFAULT_WINDOW_BYTES = 65_535;
/**
 * Streams a connection may open in one turn of the event loop, in multiples of the concurrent
 * streams it may have open: see streamOpened.
 */
const STREAMS_PER_READ_PER_CONCURRENT = 3;
/** How long the first GOAWAY's PING may take to come back before the second GOAWAY goes anyway. */
const DRAIN_PING_TIMEOUT_MS = 1000;

/** What the connection policy needs of a call: its time limits, checked once a second (and the links of the connection's list of calls). */
export interface SweptCall extends Listed<SweptCall> {
  sweep(now: number): void;
}

/** What every connection of a server shares. */
export interface ConnectionContext {
  limits: GrpcServerLimits;
  processBudget: ProcessBudget;
  clock: CoarseClock;
  logger: GrpcServerLogger;
  onLimit: (limit: LimitName) => void;
}

/**
 * One client connection and its policy: the budget its calls share, the handshake timeout (the
 * client's preface and SETTINGS, and its acknowledgement of the server's), the idle timeout, the maximum age with its grace, keepalive enforcement and the server's
 * own keepalive pings, and the graceful close (two-step GOAWAY). `sweep` runs once a second.
 */
export class Connection implements CallHost {
  readonly budget: ConnectionBudget;
  readonly pings: PingEnforcement;
  readonly limits: GrpcServerLimits;
  readonly clock: CoarseClock;
  readonly logger: GrpcServerLogger;
  private readonly onLimit: (limit: LimitName) => void;
  /** The flow-control window streams get now: HTTP/2's default until a large message comes (widenWindows). */
  streamWindow = DEFAULT_WINDOW_BYTES;
  private readonly calls = new CallList<SweptCall>();
  private readonly keepalive: KeepaliveProbe;
  private readonly resets = resetAllowance();
  private readonly smallFrames = smallFrameAllowance();
  /** Streams the client opened in this turn of the event loop (back to 0 by a setImmediate once the turn's reads are done). */
  private streamsThisRead = 0;
  private readonly maxStreamsPerRead: number;
  private readonly newRead = (): void => void (this.streamsThisRead = 0);
  private readonly openedAt: number;
  /** The maximum age with grpc-go's ±10% jitter, so connections opened together do not all close together. */
  private readonly maxAgeMs: number;
  private idleSince: number;
  /** The client's preface and SETTINGS arrived, and it acknowledged the server's (a SETTINGS ACK): until then Node judges headers by HTTP/2's defaults. */
  private prefaced = false;
  private acknowledged = false;
  private draining = false;
  /** When a draining connection is cut, whatever it still carries. */
  private cutAt: number | undefined;

  constructor(
    readonly session: ServerHttp2Session,
    { limits, processBudget, clock, logger, onLimit }: ConnectionContext,
  ) {
    this.limits = limits;
    this.clock = clock;
    this.logger = logger;
    this.onLimit = onLimit;
    this.budget = new ConnectionBudget(processBudget, limits.connectionBufferBytes);
    this.pings = new PingEnforcement(limits.keepaliveMinPingIntervalMs, limits.keepalivePermitWithoutStream);
    this.keepalive = new KeepaliveProbe(session, clock, limits.keepaliveTimeMs, limits.keepaliveTimeoutMs);
    this.openedAt = this.idleSince = clock.now;
    this.maxAgeMs = limits.maxConnectionAgeMs * (0.9 + Math.random() * 0.2);
    this.maxStreamsPerRead = STREAMS_PER_READ_PER_CONCURRENT * limits.maxConcurrentStreams;
    session.once('remoteSettings', () => (this.prefaced = true));
    session.once('localSettings', () => (this.acknowledged = true));
    session.on('ping', () => {
      this.keepalive.heardAt = this.clock.now;
      if (this.pings.tooMany(this.calls.size)) this.calm('too_many_pings');
    });
    if (limits.connectionWindowBytes > DEFAULT_WINDOW_BYTES) session.setLocalWindowSize(limits.connectionWindowBytes);
  }

  /**
   * Widens every stream's flow-control window to `streamWindowBytes` (a SETTINGS frame; the open
   * streams gain the difference at once, RFC 9113 6.9.2), the first time the client sends a
   * message larger than the window it has: a 1 MiB Set then travels in four round trips (with the
   * default 256 KiB) instead of sixteen. Until then streams keep HTTP/2's 64 KiB, which is what a stream the server stopped
   * reading (a client that sends and never reads) may still bring in; grpc-go grows its windows
   * from what it measures (BDP) for the same reason.
   */
  widenWindows(): void {
    const window = this.limits.streamWindowBytes;
    if (this.streamWindow >= window || this.session.destroyed) return;
    this.streamWindow = window;
    this.session.settings({ initialWindowSize: window });
  }

  opened(call: SweptCall): void {
    this.calls.add(call);
    this.keepalive.heardAt = this.clock.now;
  }

  closed(call: SweptCall): void {
    this.calls.remove(call);
    if (this.calls.size === 0) this.idleSince = this.clock.now;
  }

  private get handshaken(): boolean {
    return this.prefaced && this.acknowledged;
  }

  limitReached(limit: LimitName): void {
    this.onLimit(limit);
  }

  /**
   * A stream whose headers exceed the metadata limit. Node refuses such headers itself (RST_STREAM
   * ENHANCE_YOUR_CALM, before any of it reaches JavaScript) once the client acknowledged the
   * server's SETTINGS; before that it holds them to HTTP/2's default (64 KiB) and hands them over,
   * as strings that stay in memory until the next full garbage collection. A client that sends
   * them before acknowledging is therefore disconnected, not just refused the stream.
   */
  oversizedMetadata(stream: ServerHttp2Stream): void {
    stream.close(h2.NGHTTP2_ENHANCE_YOUR_CALM);
    this.onLimit('metadata_size');
    if (!this.handshaken) this.calm('metadata_too_large');
  }

  /**
   * A stream the client opened; false once the connection ended because it opened more in one
   * turn of the event loop than a client that waits for answers can. Node hands JavaScript every
   * stream of what one socket read brought (libuv reads up to 32 x 64 KiB at a time) before
   * anything else runs, and each costs Node's own stream, its events and its error when reset
   * (about 0.1–0.2 ms): 10,000 HEADERS and RST_STREAM pairs read at once kept the event loop for
   * a quarter to half a second before the reset allowances (below; nghttp2's own, 1000 at once)
   * ended the connection. A client can have at most maxConcurrentStreams streams open, and opens
   * more only as earlier ones end: within one read, only by ending them itself (resets) or when
   * the read spans answers the server sent before a stall, so three times maxConcurrentStreams
   * (300 by default) is more than a well-behaved client opens in a turn, and ending the connection
   * there bounds what one read may cost. What follows in the same read is dropped by Node and
   * nghttp2 without reaching JavaScript once the session is destroyed.
   */
  streamOpened(): boolean {
    if (this.session.destroyed) return false;
    if (this.streamsThisRead++ === 0) setImmediate(this.newRead);
    if (this.streamsThisRead <= this.maxStreamsPerRead) return true;
    this.calm('too_many_streams_per_read');
    return false;
  }

  /** A call the client cancelled before it ended: past the allowance (allowance.ts), the connection ends. */
  cancelledByClient(): void {
    if (!this.session.destroyed && !this.resets.take()) this.calm('too_many_resets');
  }

  /** A DATA frame under 1 KiB that left a message unfinished: past the allowance (allowance.ts), the connection ends. */
  smallFrame(): void {
    if (!this.session.destroyed && !this.smallFrames.take()) this.calm('too_many_small_frames');
  }

  /** Once a second: the connection's time limits, then its calls'. */
  sweep(now: number): void {
    if (this.session.destroyed) return;
    const cut = this.overdue(now);
    if (cut !== undefined) return this.cut(cut);
    if (!this.handshaken) return;
    if (!this.draining) this.retireIfDue(now);
    this.calls.forEach((call) => call.sweep(now));
  }

  /** The limit that ends the connection now, if one does: no handshake, the age's grace over, a keepalive ping unanswered. */
  private overdue(now: number): LimitName | undefined {
    const { limits } = this;
    if (!this.handshaken) return limits.handshakeTimeoutMs > 0 && this.clock.since(this.openedAt) >= limits.handshakeTimeoutMs ? 'handshake_timeout' : undefined;
    if (this.cutAt !== undefined && now >= this.cutAt) return 'max_connection_age';
    return this.keepalive.overdue(now) ? 'keepalive_timeout' : undefined;
  }

  /** Closes gracefully a connection idle too long, or too old (then cut after the grace). */
  private retireIfDue(now: number): void {
    const { limits } = this;
    if (this.calls.size === 0 && limits.connectionIdleTimeoutMs > 0 && this.clock.since(this.idleSince) >= limits.connectionIdleTimeoutMs) {
      this.onLimit('connection_idle');
      void this.drain('max_idle');
    } else if (limits.maxConnectionAgeMs > 0 && this.clock.since(this.openedAt) >= this.maxAgeMs) {
      this.onLimit('max_connection_age');
      void this.drain('max_age');
      this.cutAt = now + limits.maxConnectionAgeGraceMs;
    }
  }

  /**
   * Closes gracefully as grpc-go does: a first GOAWAY that refuses nothing and a PING, then, once
   * the PING is answered (the client has seen the GOAWAY, so no stream of its is still on the way)
   * or after a second, the final GOAWAY with the last stream the server took; calls in flight
   * finish, then the connection closes. Streams the client opens in between are not processed
   * (nghttp2 takes none after a GOAWAY), which the final GOAWAY tells it, so it retries them
   * elsewhere. Without calls in flight nghttp2 reads nothing after a GOAWAY, not even the PING's
   * answer: the final GOAWAY then follows at once.
   */
  drain(reason: string): Promise<void> {
    const { session } = this;
    if (this.draining || session.closed || session.destroyed) return Promise.resolve();
    this.draining = true;
    session.goaway(h2.NGHTTP2_NO_ERROR, ANY_STREAM, Buffer.from(reason));
    return new Promise((resolve) => {
      const finalStep = (): void => {
        clearTimeout(timer);
        if (!session.closed && !session.destroyed) session.close();
        resolve();
      };
      const timer = setTimeout(finalStep, DRAIN_PING_TIMEOUT_MS);
      if (!session.ping(finalStep) || this.calls.size === 0) finalStep();
    });
  }

  /** Ends the connection at once (the calls it carries are cancelled). */
  private cut(limit: LimitName): void {
    this.onLimit(limit);
    if (!this.session.destroyed) this.session.destroy();
  }

  /** grpc-go's answer to a client that pings (or resets) too often: GOAWAY ENHANCE_YOUR_CALM with its reason, and the connection closed. */
  private calm(reason: 'too_many_pings' | 'too_many_resets' | 'too_many_streams_per_read' | 'too_many_small_frames' | 'metadata_too_large'): void {
    const { session } = this;
    if (session.destroyed) return;
    if (reason !== 'metadata_too_large') this.onLimit(reason);
    session.goaway(h2.NGHTTP2_ENHANCE_YOUR_CALM, session.state.lastProcStreamID ?? 0, Buffer.from(reason));
    session.destroy(undefined, h2.NGHTTP2_ENHANCE_YOUR_CALM);
  }
}
