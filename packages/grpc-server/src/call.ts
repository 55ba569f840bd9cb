import { constants as h2, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, propagation, trace, type Context, type Span } from '@opentelemetry/api';
import type { ConnectionBudget } from './budgets.js';
import type { CoarseClock } from './coarse-clock.js';
import { asGrpcError, statusHeaders, type GrpcError } from './grpc-status.js';
import { GrpcStreamCall, type StreamingCallPort, type UnaryCall, type UnaryCallback } from './handlers.js';
import type { PingEnforcement } from './keepalive.js';
import { frameMessage, PREFIX_BYTES, prefixOf, SERVER_BUSY, type MessageAssembler, type MessageSink } from './message-assembly.js';
import type { GrpcServerLimits, GrpcServerLogger, LimitName } from './options.js';
import type { Route } from './routes.js';

export const OK_HEADERS: OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc' };

/**
 * OK_HEADERS as raw headers (name, value, …) with the `date` Node would add, made once a second
 * and shared by every answer of that second: Node copies a headers object into a new one for each
 * response (about 600 bytes of garbage a call), and takes an array as it is (it keeps a date it
 * is given, and reads the array without changing it).
 */
class AnswerHeaders {
  private second = -1;
  private headers: readonly string[] = [];

  at(now: number): readonly string[] {
    const second = Math.floor(now / 1000);
    if (second !== this.second) {
      this.second = second;
      this.headers = [':status', '200', 'content-type', 'application/grpc', 'date', new Date(now).toUTCString()];
    }
    return this.headers;
  }
}
const answerHeaders = new AnswerHeaders();
const RESPOND_WITH_TRAILERS = { waitForTrailers: true };
const SERVER_SPAN = { kind: SpanKind.SERVER };
const OK_TRAILERS: OutgoingHttpHeaders = { 'grpc-status': '0' };
/**
 * Messages a bidirectional call may have written and not yet sent (its client reads too slowly)
 * before the server stops reading the client's requests: a client that sends and never reads (a
 * reflection flood) is then held back by HTTP/2 flow control, not answered into server memory.
 */
const MAX_UNSENT_BEFORE_PAUSE = 64;
/** Answers up to this size are copied behind their prefix into one buffer (one write); larger ones go out as two. */
const COPY_LIMIT_BYTES = 64 * 1024;
/**
 * A DATA frame smaller than this that leaves a message unfinished counts against the connection's
 * allowance (allowance.ts) while the stream's frames so far average less than this too: a client
 * whose sends flow control cuts short (a 1 MiB message leaves as 16 KiB frames and, at each
 * window's end, a few small ones) is not one that sends a byte a frame.
 */
const SMALL_FRAME_BYTES = 1024;
/** Node's timers hold at most 2^31 - 1 ms; a longer deadline is no deadline here. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const tracer = trace.getTracer('subscription-platform');

const ANSWER_TOO_LARGE: GrpcError = { code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'The answer is larger than the server sends' };
const ANSWER_NO_ROOM: GrpcError = { code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'The server has no room for this answer now; retry later' };
const REQUEST_TIMED_OUT: GrpcError = { code: GrpcStatus.DEADLINE_EXCEEDED, details: 'The request was not received in time' };
const CALL_TOO_LONG: GrpcError = { code: GrpcStatus.DEADLINE_EXCEEDED, details: "The call exceeded the server's maximum duration" };
const DEADLINE_EXCEEDED: GrpcError = { code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' };

/** What a call needs of its connection (connection.ts). */
export interface CallHost {
  readonly budget: ConnectionBudget;
  readonly pings: PingEnforcement;
  readonly clock: CoarseClock;
  readonly limits: GrpcServerLimits;
  readonly logger: GrpcServerLogger;
  /** The flow-control window of the connection's streams now. */
  readonly streamWindow: number;
  widenWindows(): void;
  opened(call: Call): void;
  closed(call: Call): void;
  /** The client reset a call before it ended. */
  cancelledByClient(): void;
  /** The client sent a DATA frame under 1 KiB that left a message unfinished. */
  smallFrame(): void;
  limitReached(limit: LimitName): void;
}

/** Whether the stream still takes frames from this side (a client's RST_STREAM closes it at once). */
export const writable = (stream: ServerHttp2Stream): boolean => !stream.closed && !stream.destroyed;

/**
 * Answers with a status and no message: the status in the only HEADERS frame (Trailers-Only), and
 * RST_STREAM(NO_ERROR) after it while the client is still sending (PROTOCOL-HTTP2, "Early Server
 * Closure"), so the stream is freed instead of read and dropped until the client notices.
 */
export function refuse(stream: ServerHttp2Stream, headers: OutgoingHttpHeaders, requestEnded: boolean): void {
  if (!writable(stream) || stream.headersSent) return;
  stream.resume();
  stream.respond(headers, { endStream: true });
  if (!requestEnded) stream.close(h2.NGHTTP2_NO_ERROR);
}

interface AbortReason {
  name: 'AbortError' | 'TimeoutError';
  message: string;
}

/**
 * The signal's reason, as AbortSignal.timeout and fetch make them. Made only for a handler that
 * asked for the signal: an Error captures a stack, which a flood of resets would pay for each call.
 */
const abortError = (reason: AbortReason): DOMException => new DOMException(reason.message, reason.name);

function resetStream(stream: ServerHttp2Stream, code: number): void {
  if (writable(stream)) stream.close(code);
}

/**
 * Takes the call's listeners off its closed stream. Node keeps a closed stream in memory until the
 * next full garbage collection (measured: every stream of a Get load survives the scavenges, until
 * a mark-compact frees it), so whatever its listeners reach (the call, its closures, its request
 * message, the handler's state) would be copied by each scavenge and promoted with it: taken off,
 * the call is garbage the first scavenge frees. 'error' keeps its shared no-op (nothing to hold).
 */
function detach(stream: ServerHttp2Stream, onClose: () => void, streaming: boolean): void {
  stream.removeListener('close', onClose);
  stream.removeAllListeners('data');
  stream.removeAllListeners('end');
  // A unary call's is the shared sendOkTrailers; a streaming call's reaches the call.
  if (streaming) stream.removeAllListeners('wantTrailers');
}

function expireCall(call: Call): void {
  call.expire();
}

function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

/**
 * One call on one HTTP/2 stream: its budget (request headers and messages, answers not yet sent),
 * its deadline and timeouts (checked by the connection's sweep), its cancellation (an AbortSignal
 * made when a handler asks for it), its span, and how it ends on the wire.
 */
export class Call implements StreamingCallPort, UnaryCall<unknown>, MessageSink {
  request: unknown = undefined;
  /** A unary or server-streaming call's request message, once assembled (the call is its assembler's sink). */
  requestMessage: Buffer | undefined = undefined;
  /** Assembles the request's messages; what it holds of an unfinished one is given back when the stream closes. */
  assembler: MessageAssembler | undefined = undefined;
  /** Whether a second request message came for a method that takes one. */
  secondMessage = false;
  /** Whether the outcome is decided: what the client still sends is read and dropped. */
  done = false;
  /** Whether the client's END_STREAM arrived: the request is whole. */
  requestEnded = false;
  unsentMessages = 0;
  deadline: number | undefined;
  /** The context the handler runs in: its span's, when tracing records one. */
  scope: Context | undefined = undefined;
  private receivedAt: number;
  /** When an answer byte was last sent (or the first unsent one written). */
  private sentAt = 0;
  /** DATA frames received on the stream, and their bytes: their average tells tiny framing from flow control's. */
  private frames = 0;
  private frameBytes = 0;
  private requestBytes = 0;
  private answerBytes = 0;
  /** Reserved for the flow-control window of a stream paused because its answers wait. */
  private pausedBytes = 0;
  /** Whether the deadline is the client's (a timer) rather than the server's cap (the sweep). */
  private clientDeadline = false;
  /** When the client's deadline passes, on the monotonic clock (performance.now()): the timer only wakes the call to check it. */
  private expiresAt = 0;
  private timer: NodeJS.Timeout | undefined;
  private span: Span | undefined;
  private streamCall: GrpcStreamCall<unknown, unknown> | undefined;
  private controller: AbortController | undefined;
  /** Why the call was cancelled, once it was: the signal's reason is made from it only when a handler asked for the signal. */
  private abortReason: AbortReason | undefined;
  private trailers = OK_TRAILERS;
  /** The RST_STREAM code sent after the trailers while the client is still sending. */
  private resetCode: number = h2.NGHTTP2_NO_ERROR;
  /** The connection's list of calls in flight (call-list.ts). */
  prevListed: Call | undefined = undefined;
  nextListed: Call | undefined = undefined;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly route: Route,
    private readonly host: CallHost,
    /** The request headers' share of the budget, taken before the call was made. */
    private headerBytes: number,
  ) {
    this.receivedAt = host.clock.now;
    stream.on('close', this.onClose);
    host.opened(this);
  }

  /** Starts the deadline and the span (when tracing records one, `scope` is its context). */
  begin(headers: IncomingHttpHeaders, timeoutMs: number | undefined): void {
    const { maxCallDurationMs } = this.host.limits;
    const cap = this.route.kind === 'unary' && maxCallDurationMs > 0 ? maxCallDurationMs : undefined;
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS && (cap === undefined || timeoutMs <= cap)) {
      this.clientDeadline = true;
      this.deadline = Date.now() + timeoutMs;
      this.expiresAt = performance.now() + timeoutMs;
      this.timer = setTimeout(expireCall, timeoutMs, this);
    } else if (cap !== undefined) {
      this.deadline = Date.now() + cap;
    }
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tracer.startSpan(this.route.spanName, SERVER_SPAN, parent);
    if (!span.isRecording()) return;
    span.setAttributes({ 'rpc.system': 'grpc', 'rpc.service': this.route.service, 'rpc.method': this.route.rpc });
    this.span = span;
    this.scope = trace.setSpan(parent, span);
  }

  get signal(): AbortSignal {
    this.controller ??= new AbortController();
    if (this.abortReason !== undefined && !this.controller.signal.aborted) this.controller.abort(abortError(this.abortReason));
    return this.controller.signal;
  }

  get cancelled(): boolean {
    return this.abortReason !== undefined;
  }

  /** A streaming call's handle, whose cancellation follows the call's. */
  streaming(): GrpcStreamCall<unknown, unknown> {
    this.streamCall = new GrpcStreamCall<unknown, unknown>(this);
    return this.streamCall;
  }

  /** A DATA frame of `bytes` arrived from the client (the stream is not idle); `midMessage`: it left a message unfinished. */
  received(bytes: number, midMessage: boolean): void {
    this.receivedAt = this.host.clock.now;
    this.frames++;
    this.frameBytes += bytes;
    if (midMessage && bytes < SMALL_FRAME_BYTES && this.frameBytes < this.frames * SMALL_FRAME_BYTES) this.host.smallFrame();
  }

  /** Reserves a request message's bytes; false (the call then ends RESOURCE_EXHAUSTED) when the budgets have no room. */
  reserveRequest(bytes: number): boolean {
    if (!this.host.budget.take(bytes)) {
      this.host.limitReached('message_budget');
      return false;
    }
    this.requestBytes += bytes;
    if (bytes > this.host.streamWindow) this.host.widenWindows();
    return true;
  }

  /** MessageSink: room for a request message. */
  reserve(bytes: number): boolean {
    return this.reserveRequest(bytes);
  }

  /** MessageSink: a unary or server-streaming call's request message (a second one is refused once the chunk is read). */
  message(bytes: Buffer): void {
    if (this.requestMessage === undefined) this.requestMessage = bytes;
    else this.secondMessage = true;
  }

  /** The unary handler's callback. */
  readonly callback: UnaryCallback<unknown> = (error, response) => this.answer(error, response);

  /** A bidirectional call's message was handled: its bytes are free again. */
  releaseRequest(bytes: number): void {
    this.requestBytes -= bytes;
    this.host.budget.release(bytes);
  }

  hasRoom(bytes: number): boolean {
    return this.host.budget.fits(bytes);
  }

  /** The unary answer: the response with OK, or the handler's error. */
  answer(error: unknown, response?: unknown): void {
    if (this.done) return;
    if (error !== null && error !== undefined) return this.finish(asGrpcError(error));
    const bytes = this.serialize(response);
    if (bytes === undefined) return;
    this.settle(GrpcStatus.OK);
    const { stream } = this;
    if (!writable(stream)) return;
    stream.respond(answerHeaders.at(this.host.clock.now), RESPOND_WITH_TRAILERS);
    stream.on('wantTrailers', sendOkTrailers);
    this.charge(PREFIX_BYTES + bytes.length);
    if (bytes.length < COPY_LIMIT_BYTES) return void stream.end(frameMessage(bytes), this.written);
    // A large answer goes out as it is, after its prefix, rather than copied behind it.
    stream.write(prefixOf(bytes.length));
    stream.end(bytes, this.written);
  }

  write(message: unknown): boolean {
    const { stream } = this;
    if (this.done || !writable(stream)) return false;
    const bytes = this.serialize(message);
    if (bytes === undefined) return false;
    const framed = frameMessage(bytes);
    if (!stream.headersSent) {
      stream.respond(answerHeaders.at(this.host.clock.now), RESPOND_WITH_TRAILERS);
      stream.on('wantTrailers', () => this.sendTrailers());
    }
    this.charge(framed.length);
    const flushed = stream.write(framed, this.written);
    if (++this.unsentMessages === MAX_UNSENT_BEFORE_PAUSE && this.route.kind === 'bidi') this.pause();
    return flushed && !this.done;
  }

  /** Ends the call with OK (no error) or the error's status; later outcomes are ignored. */
  finish(error: GrpcError | undefined): void {
    if (this.done) return;
    this.settle(error?.code ?? GrpcStatus.OK, error?.details);
    const { stream } = this;
    if (!writable(stream)) return;
    if (!stream.headersSent) {
      refuse(stream, { ...OK_HEADERS, ...statusHeaders(error ?? { code: GrpcStatus.OK, details: '' }) }, this.requestEnded);
      return;
    }
    if (error !== undefined) this.trailers = statusHeaders(error);
    stream.end();
  }

  /** A streaming handler's `emit('error', …)`. */
  fail(error: unknown): void {
    this.finish(asGrpcError(error));
  }

  /** Called by the connection's sweep (once a second): the time limits measured in seconds. */
  sweep(now: number): void {
    const { limits, clock } = this.host;
    if (this.answerBytes > 0 && limits.writeTimeoutMs > 0 && clock.since(this.sentAt) >= limits.writeTimeoutMs) {
      // Nobody reads the answer: what is queued for it goes with the stream.
      this.host.limitReached('write_timeout');
      this.reset(GrpcStatus.CANCELLED, 'The answer was not read in time');
    } else if (!this.done) {
      this.checkDuration(now);
    }
  }

  /** A request that stopped arriving, or a unary call past the server's maximum duration. */
  private checkDuration(now: number): void {
    const error = this.idle() ? REQUEST_TIMED_OUT : !this.clientDeadline && now >= (this.deadline ?? Number.POSITIVE_INFINITY) ? CALL_TOO_LONG : undefined;
    if (error === undefined) return;
    this.host.limitReached(error === REQUEST_TIMED_OUT ? 'stream_idle_timeout' : 'max_call_duration');
    this.finish(error);
    this.abort('TimeoutError', error.details);
  }

  /** Whether the client stopped sending a request it has not finished (a stream paused by the server does not count). */
  private idle(): boolean {
    const { streamIdleTimeoutMs } = this.host.limits;
    return !this.requestEnded && this.pausedBytes === 0 && streamIdleTimeoutMs > 0 && this.host.clock.since(this.receivedAt) >= streamIdleTimeoutMs;
  }

  /** The client's deadline passed (PROTOCOL-HTTP2, "Client Cancellation"). */
  expire(): void {
    this.timer = undefined;
    if (this.done) return;
    // Node truncates a timer's delay to whole milliseconds and counts it from a millisecond clock,
    // so the timer may fire up to 2 ms early. A reset before the client's deadline reaches grpc-go
    // as CANCELLED, not DEADLINE_EXCEEDED (its server's Go timer never fires early): wait the rest.
    const left = this.expiresAt - performance.now();
    if (left > 0) {
      this.timer = setTimeout(expireCall, Math.ceil(left), this);
      return;
    }
    this.settle(GrpcStatus.DEADLINE_EXCEEDED, DEADLINE_EXCEEDED.details);
    this.abort('TimeoutError', DEADLINE_EXCEEDED.details);
    const { stream } = this;
    if (!writable(stream)) return;
    // Nothing sent yet, or answers still queued that nobody will read: RST_STREAM(CANCEL), as
    // grpc-go; the client fails the call DEADLINE_EXCEEDED by its own timer.
    if (!stream.headersSent || this.answerBytes > 0) {
      stream.close(h2.NGHTTP2_CANCEL);
      return;
    }
    // A stream that answered: the status in the trailers, then RST_STREAM(CANCEL) if the client still sends.
    this.trailers = statusHeaders(DEADLINE_EXCEEDED);
    this.resetCode = h2.NGHTTP2_CANCEL;
    stream.end();
  }

  private sendTrailers(): void {
    const { stream } = this;
    stream.sendTrailers(this.trailers);
    // After the trailers have left: submitted from here, within nghttp2's own send, the reset
    // would go out first and the trailers never.
    if (!this.requestEnded) setImmediate(resetStream, stream, this.resetCode);
  }

  private readonly written = (): void => {
    if (this.unsentMessages > 0 && this.unsentMessages-- === MAX_UNSENT_BEFORE_PAUSE && this.pausedBytes > 0) this.resume();
    // The stream's buffered length counts what is still to be sent, this write's chunk no longer.
    const unsent = this.stream.writableLength;
    if (unsent < this.answerBytes) {
      this.host.budget.release(this.answerBytes - unsent);
      this.answerBytes = unsent;
    }
    this.sentAt = this.host.clock.now;
  };

  /** The stream is gone (answered, reset by either side, or its connection closed): everything it held is released. */
  private readonly onClose = (): void => {
    this.host.closed(this);
    this.host.budget.release(this.headerBytes + this.requestBytes + this.answerBytes + this.pausedBytes);
    this.headerBytes = this.requestBytes = this.answerBytes = this.pausedBytes = 0;
    this.assembler?.release();
    if (!this.done) {
      this.settle(GrpcStatus.CANCELLED, 'Cancelled by the client');
      this.abort('AbortError', 'The client cancelled the call');
      this.host.cancelledByClient();
    }
    this.streamCall?.emit('close');
    detach(this.stream, this.onClose, this.streamCall !== undefined);
  };

  /** The answer's bytes, or undefined once the call ended because they cannot be sent (a bug, too large, no room). */
  private serialize(message: unknown): Buffer | undefined {
    let bytes: Buffer;
    try {
      bytes = this.route.method.responseSerialize(message);
    } catch (err) {
      this.host.logger.error({ err, method: this.route.method.path }, 'grpc response not serializable');
      this.finish({ code: GrpcStatus.INTERNAL, details: 'Error serializing response' });
      return undefined;
    }
    if (bytes.length > this.host.limits.maxSendMessageBytes) {
      this.host.limitReached('answer_size');
      this.finish(ANSWER_TOO_LARGE);
      return undefined;
    }
    if (!this.host.budget.fits(PREFIX_BYTES + bytes.length)) {
      this.host.limitReached('answer_budget');
      this.finish(ANSWER_NO_ROOM);
      return undefined;
    }
    this.host.pings.sent = true;
    return bytes;
  }

  /** Answer bytes handed to the stream, held until its write callback says they left. */
  private charge(bytes: number): void {
    if (this.answerBytes === 0) this.sentAt = this.host.clock.now;
    this.answerBytes += bytes;
    this.host.budget.charge(bytes);
  }

  /** Stops reading a bidirectional client's requests while its answers wait, reserving what its window may still bring. */
  private pause(): void {
    const window = this.host.streamWindow;
    if (!this.host.budget.take(window)) {
      this.host.limitReached('stream_budget');
      this.finish(SERVER_BUSY);
      return;
    }
    this.pausedBytes = window;
    this.stream.pause();
  }

  private resume(): void {
    this.host.budget.release(this.pausedBytes);
    this.pausedBytes = 0;
    this.stream.resume();
  }

  /** Ends the call at once with RST_STREAM(CANCEL): nothing more can reach the client. */
  private reset(code: GrpcStatus, details: string): void {
    if (!this.done) this.settle(code, details);
    this.abort('AbortError', details);
    if (writable(this.stream)) this.stream.close(h2.NGHTTP2_CANCEL);
  }

  /** Tells the handler nobody waits any more: the signal aborts, a streaming call emits `cancelled`. */
  private abort(name: AbortReason['name'], message: string): void {
    if (this.abortReason !== undefined) return;
    this.abortReason = { name, message };
    this.controller?.abort(abortError(this.abortReason));
    const call = this.streamCall;
    if (call === undefined || call.cancelled) return;
    call.cancelled = true;
    call.emit('cancelled');
  }

  /** Marks the outcome: the deadline stops, the span ends with the status. */
  private settle(code: GrpcStatus, details?: string): void {
    this.done = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    const { span } = this;
    if (span === undefined) return;
    span.setAttribute('rpc.grpc.status_code', code);
    if (code !== GrpcStatus.OK) span.setStatus({ code: SpanStatusCode.ERROR, message: details ?? '' });
    span.end();
  }
}
