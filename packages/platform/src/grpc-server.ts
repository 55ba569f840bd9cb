import { EventEmitter } from 'node:events';
import http2, { constants as h2, type Http2Server, type Http2Session, type IncomingHttpHeaders, type OutgoingHttpHeaders, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace, type Context, type Span } from '@opentelemetry/api';
import type { Logger } from './logger.js';
import { MessageReader, encodeGrpcMessage, frameMessage, parseGrpcTimeout, type GrpcError } from './grpc-messages.js';

/**
 * A gRPC server on Node's own HTTP/2 (node:http2), for unary, server-streaming and bidirectional
 * methods of service definitions as proto-loader and grpc-js make them, with grpc-js' handler
 * conventions, so grpc-health-check's and @grpc/reflection's services add themselves to it
 * (`addToServer`). Why not grpc-js' Server: it costs about twice node:http2's CPU per call
 * (services/cache/README.md, "Peer benchmark"). What it does of the protocol: `grpc-timeout`
 * deadlines, status trailers (Trailers-Only for a call that sends no message), a receive limit
 * checked on each message's prefix, identity encoding only (another `grpc-encoding` is refused
 * UNIMPLEMENTED with `grpc-accept-encoding: identity`), a bound on concurrent streams per
 * connection, GOAWAY on shutdown, and an OpenTelemetry server span per call when tracing is on.
 * Client-streaming methods are not supported (addService refuses them).
 */

/** One method as a service definition describes it (proto-loader's and grpc-js' MethodDefinition). */
export interface GrpcMethodDefinition {
  path: string;
  requestStream: boolean;
  responseStream: boolean;
  /** The method's name as the handlers may spell it (proto-loader: camelCase), besides its key. */
  originalName?: string;
  requestDeserialize(bytes: Buffer): unknown;
  responseSerialize(value: unknown): Buffer;
}

/** What a unary handler is given: the decoded request. */
export interface UnaryCall<Request> {
  readonly request: Request;
}

/** A unary handler's answer: an error (its status) or the response. */
export type UnaryCallback<Response> = (error: GrpcError | null, response?: Response) => void;

export type UnaryHandler<Request, Response> = (call: UnaryCall<Request>, callback: UnaryCallback<Response>) => void;

/**
 * A streaming call as its handler sees it. Events: `data` (each request message of a bidirectional
 * call), `end` (the client finished sending), `cancelled` (the client went away or the deadline
 * passed; nothing more is sent), `close` (the call is over). `emit('error', status)` ends the call
 * with that status, as in grpc-js.
 */
export class GrpcStreamCall<Request, Response> extends EventEmitter {
  /** The request of a server-streaming call (a bidirectional call's arrive as `data`). */
  request!: Request;
  cancelled = false;

  constructor(private readonly exchange: Exchange) {
    super();
    this.on('error', (error: GrpcError) => exchange.finish(error));
  }

  /** Sends one message; false once the call is over. */
  write(message: Response): boolean {
    return this.exchange.write(message);
  }

  /** Messages written and not yet handed to the connection (a client reading slowly). */
  get writableLength(): number {
    return this.exchange.unsent;
  }

  /** Ends the call with OK. */
  end(): void {
    this.exchange.finish(undefined);
  }
}

export type ServerStreamingHandler<Request, Response> = (call: GrpcStreamCall<Request, Response>) => void;

export interface GrpcServerOptions {
  /** The largest request message read; a larger one is refused (RESOURCE_EXHAUSTED) from its prefix. */
  maxReceiveMessageBytes: number;
  /** Streams one connection may have open at once (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
  maxConcurrentStreams: number;
  logger: Logger;
}

type Kind = 'unary' | 'serverStreaming' | 'bidi';

interface Route {
  method: GrpcMethodDefinition;
  kind: Kind;
  handler: (call: never, callback: never) => void;
  /** `grpc.package.Service/Method`, the name @opentelemetry/instrumentation-grpc gives its spans. */
  spanName: string;
  service: string;
  rpc: string;
}

const OK_HEADERS: OutgoingHttpHeaders = { ':status': 200, 'content-type': 'application/grpc' };
const OK_TRAILERS: OutgoingHttpHeaders = { 'grpc-status': '0' };
/**
 * Messages a call may have written and not yet sent (its client reads too slowly) before the
 * server stops reading the client's requests: a bidirectional client that sends and never reads
 * (a reflection flood) is then held back by HTTP/2 flow control, not answered into server memory.
 */
const MAX_UNSENT_BEFORE_PAUSE = 64;
/** Node's timers hold at most 2^31 - 1 ms; a longer deadline is no deadline here. */
const MAX_TIMER_MS = 2 ** 31 - 1;
const tracer = trace.getTracer('subscription-platform');
// A stream reset or torn down emits 'error' after its outcome is already decided (or moot).
const ignore = (): void => undefined;

/** Answers a call that sends no message: its status in the only HEADERS frame (Trailers-Only). */
function refuse(stream: ServerHttp2Stream, error: GrpcError, extra: OutgoingHttpHeaders = {}): void {
  if (stream.destroyed) return;
  // What the client still sends is dropped as it arrives, not buffered.
  stream.resume();
  stream.respond({ ...OK_HEADERS, ...extra, ...statusHeaders(error) }, { endStream: true });
}

/** A call's status as trailers (or, Trailers-Only, in its only HEADERS frame) carry it. */
const statusHeaders = (error: GrpcError): OutgoingHttpHeaders => ({ 'grpc-status': String(error.code), 'grpc-message': encodeGrpcMessage(error.details) });

/** The error a handler passed (grpc-js' `{ code, details }` or an Error with them), as a status. */
function asGrpcError(error: unknown): GrpcError {
  const { code, details, message } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; details?: unknown; message?: unknown };
  return {
    code: typeof code === 'number' && code in GrpcStatus ? code : GrpcStatus.UNKNOWN,
    details: typeof details === 'string' ? details : typeof message === 'string' ? message : 'Unknown error',
  };
}

/** One call on one HTTP/2 stream: what was sent, its deadline, its span. */
class Exchange {
  unsent = 0;
  /** Whether the outcome is decided: what the client still sends is read and dropped. */
  done = false;
  private trailers = OK_TRAILERS;
  private timer: NodeJS.Timeout | undefined;
  private span: Span | undefined;
  private streamCall: GrpcStreamCall<unknown, unknown> | undefined;
  /** A streaming call's write callback (unary calls write once, without one). */
  private sent: (() => void) | undefined;

  constructor(
    readonly stream: ServerHttp2Stream,
    readonly route: Route,
    readonly logger: Logger,
  ) {}

  /** Starts the span (when tracing records one) and the deadline; answers the context handlers run in. */
  begin(headers: IncomingHttpHeaders, timeoutMs: number | undefined): Context | undefined {
    if (timeoutMs !== undefined && timeoutMs <= MAX_TIMER_MS) this.timer = setTimeout(() => this.expire(), timeoutMs);
    const parent = propagation.extract(ROOT_CONTEXT, headers);
    const span = tracer.startSpan(this.route.spanName, { kind: SpanKind.SERVER }, parent);
    if (!span.isRecording()) return undefined;
    span.setAttributes({ 'rpc.system': 'grpc', 'rpc.service': this.route.service, 'rpc.method': this.route.rpc });
    this.span = span;
    return trace.setSpan(parent, span);
  }

  /** A streaming call's handle, whose cancellation follows the stream's. */
  streaming(): GrpcStreamCall<unknown, unknown> {
    const call = new GrpcStreamCall<unknown, unknown>(this);
    this.streamCall = call;
    this.sent = () => {
      if (this.unsent-- === MAX_UNSENT_BEFORE_PAUSE) this.stream.resume();
    };
    this.stream.once('close', () => {
      if (!this.done) this.cancel(GrpcStatus.CANCELLED);
      call.emit('close');
    });
    return call;
  }

  /** The unary answer: the response with OK, or the handler's error. */
  answer(error: unknown, response?: unknown): void {
    if (this.done) return;
    if (error !== null && error !== undefined) {
      this.finish(asGrpcError(error));
      return;
    }
    const bytes = this.serialize(response);
    if (bytes === undefined) return;
    this.settle(GrpcStatus.OK);
    const { stream } = this;
    if (stream.destroyed) return;
    stream.respond(OK_HEADERS, { waitForTrailers: true });
    stream.once('wantTrailers', sendOkTrailers);
    stream.end(frameMessage(bytes));
  }

  write(message: unknown): boolean {
    const { stream } = this;
    if (this.done || stream.destroyed) return false;
    if (!stream.headersSent) {
      stream.respond(OK_HEADERS, { waitForTrailers: true });
      stream.once('wantTrailers', () => stream.sendTrailers(this.trailers));
    }
    const bytes = this.serialize(message);
    if (bytes === undefined) return false;
    if (++this.unsent === MAX_UNSENT_BEFORE_PAUSE) stream.pause();
    return stream.write(frameMessage(bytes), this.sent);
  }

  /** The message's bytes, or undefined once the call ended INTERNAL because it could not be serialized (a bug, logged). */
  private serialize(message: unknown): Buffer | undefined {
    try {
      return this.route.method.responseSerialize(message);
    } catch (err) {
      this.logger.error({ err, method: this.route.method.path }, 'grpc response not serializable');
      this.finish({ code: GrpcStatus.INTERNAL, details: 'Error serializing response' });
      return undefined;
    }
  }

  /** Ends the call with OK (no error) or the error's status; later outcomes are ignored. */
  finish(error: GrpcError | undefined): void {
    if (this.done) return;
    this.settle(error?.code ?? GrpcStatus.OK, error?.details);
    const { stream } = this;
    if (stream.destroyed) return;
    if (!stream.headersSent) {
      refuse(stream, error ?? { code: GrpcStatus.OK, details: '' });
      return;
    }
    if (error !== undefined) this.trailers = statusHeaders(error);
    stream.end();
  }

  private expire(): void {
    this.timer = undefined;
    if (this.done) return;
    this.finish({ code: GrpcStatus.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
    this.notifyCancelled();
  }

  private cancel(code: GrpcStatus): void {
    this.settle(code, 'Cancelled by the client');
    this.notifyCancelled();
  }

  private notifyCancelled(): void {
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

function routeOf(method: GrpcMethodDefinition, handler: unknown): Route {
  if (typeof handler !== 'function') throw new Error(`no handler for ${method.path}`);
  if (method.requestStream && !method.responseStream) throw new Error(`${method.path}: client-streaming methods are not supported`);
  const [, service = '', rpc = ''] = /^\/([^/]+)\/([^/]+)$/.exec(method.path) ?? [];
  return {
    method,
    kind: method.requestStream ? 'bidi' : method.responseStream ? 'serverStreaming' : 'unary',
    handler: handler as Route['handler'],
    spanName: `grpc.${service}/${rpc}`,
    service,
    rpc,
  };
}

function sendOkTrailers(this: ServerHttp2Stream): void {
  this.sendTrailers(OK_TRAILERS);
}

export class GrpcServer {
  private readonly routes = new Map<string, Route>();
  private readonly sessions = new Set<Http2Session>();
  private readonly server: Http2Server;

  constructor(private readonly options: GrpcServerOptions) {
    this.server = http2.createServer({ settings: { maxConcurrentStreams: options.maxConcurrentStreams } });
    this.server.on('session', (session: Http2Session) => {
      this.sessions.add(session);
      session.once('close', () => this.sessions.delete(session));
    });
    this.server.on('sessionError', (err: Error) => options.logger.debug({ err }, 'grpc connection error'));
    this.server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders) => this.dispatch(stream, headers));
  }

  /**
   * Serves a service's methods with their handlers (grpc-js' signatures: `(call, callback)` for
   * unary, `(call)` for streaming), keyed by method name or its `originalName`, as grpc-js'
   * `Server.addService` takes them.
   */
  addService(definition: Readonly<Record<string, GrpcMethodDefinition>>, implementation: Readonly<Record<string, unknown>>): void {
    for (const [name, method] of Object.entries(definition)) {
      const handler = implementation[name] ?? (method.originalName === undefined ? undefined : implementation[method.originalName]);
      if (this.routes.has(method.path)) throw new Error(`${method.path} is served already`);
      this.routes.set(method.path, routeOf(method, handler));
    }
  }

  listen(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, host, () => {
        this.server.off('error', reject);
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Stops accepting connections and sends every connection GOAWAY: calls in flight finish, idle
   * connections close at once. Connections still open after `graceMs` are cut.
   */
  close(graceMs: number): Promise<void> {
    return new Promise((resolve) => {
      const force = setTimeout(() => {
        for (const session of this.sessions) session.destroy();
      }, graceMs);
      this.server.close(() => {
        clearTimeout(force);
        resolve();
      });
      for (const session of this.sessions) session.close();
    });
  }

  private dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders): void {
    stream.on('error', ignore);
    const contentType = headers['content-type'];
    if (contentType === undefined || !contentType.startsWith('application/grpc')) {
      stream.respond({ ':status': h2.HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE }, { endStream: true });
      return;
    }
    const path = headers[':path'] ?? '';
    const route = this.routes.get(path);
    if (route === undefined) {
      refuse(stream, { code: GrpcStatus.UNIMPLEMENTED, details: `The server does not implement the method ${path}` });
      return;
    }
    const encoding = headers['grpc-encoding'];
    if (encoding !== undefined && encoding !== 'identity') {
      refuse(stream, { code: GrpcStatus.UNIMPLEMENTED, details: `Message encoding ${String(encoding)} is not supported` }, { 'grpc-accept-encoding': 'identity' });
      return;
    }
    const timeoutMs = parseGrpcTimeout(headers['grpc-timeout']);
    if (Number.isNaN(timeoutMs)) {
      refuse(stream, { code: GrpcStatus.INTERNAL, details: `Invalid grpc-timeout: ${String(headers['grpc-timeout'])}` });
      return;
    }
    const exchange = new Exchange(stream, route, this.options.logger);
    const scope = exchange.begin(headers, timeoutMs);
    if (route.kind === 'bidi') this.serveBidi(exchange, scope);
    else this.serveSingleRequest(exchange, scope);
  }

  /** Unary and server-streaming calls: one request message, then the handler. */
  private serveSingleRequest(exchange: Exchange, scope: Context | undefined): void {
    const { stream, route } = exchange;
    let message: Buffer | undefined;
    let second = false;
    const reader = new MessageReader(this.options.maxReceiveMessageBytes, (bytes) => {
      if (message === undefined) message = bytes;
      else second = true;
    });
    stream.on('data', (chunk: Buffer) => {
      if (exchange.done) return;
      const error = reader.push(chunk);
      if (error !== undefined) exchange.finish(error);
      else if (second) exchange.finish({ code: GrpcStatus.UNIMPLEMENTED, details: `Received a second request message for ${route.method.path}` });
    });
    stream.on('end', () => {
      if (exchange.done) return;
      if (!reader.complete) return exchange.finish({ code: GrpcStatus.INTERNAL, details: 'Received an incomplete message' });
      if (message === undefined) return exchange.finish({ code: GrpcStatus.UNIMPLEMENTED, details: `Received no request message for ${route.method.path}` });
      const request = this.decode(exchange, message);
      if (request === undefined) return;
      if (route.kind === 'unary') {
        const call: UnaryCall<unknown> = { request: request.value };
        const callback: UnaryCallback<unknown> = (error, response) => exchange.answer(error, response);
        this.invoke(exchange, scope, () => (route.handler as UnaryHandler<unknown, unknown>)(call, callback));
      } else {
        const call = exchange.streaming();
        call.request = request.value;
        this.invoke(exchange, scope, () => (route.handler as ServerStreamingHandler<unknown, unknown>)(call));
      }
    });
  }

  /** Bidirectional calls: the handler at once, each request message as `data`, the client's end as `end`. */
  private serveBidi(exchange: Exchange, scope: Context | undefined): void {
    const { stream, route } = exchange;
    const call = exchange.streaming();
    const reader = new MessageReader(this.options.maxReceiveMessageBytes, (bytes) => {
      const request = this.decode(exchange, bytes);
      if (request !== undefined) call.emit('data', request.value);
    });
    stream.on('data', (chunk: Buffer) => {
      if (exchange.done) return;
      const error = reader.push(chunk);
      if (error !== undefined) exchange.finish(error);
    });
    stream.on('end', () => {
      if (exchange.done) return;
      if (!reader.complete) exchange.finish({ code: GrpcStatus.INTERNAL, details: 'Received an incomplete message' });
      else call.emit('end');
    });
    this.invoke(exchange, scope, () => (route.handler as ServerStreamingHandler<unknown, unknown>)(call));
  }

  /** The decoded request, or undefined once the call is refused (INTERNAL, as grpc-js answers). */
  private decode(exchange: Exchange, bytes: Buffer): { value: unknown } | undefined {
    try {
      return { value: exchange.route.method.requestDeserialize(bytes) };
    } catch {
      exchange.finish({ code: GrpcStatus.INTERNAL, details: 'Error deserializing request' });
      return undefined;
    }
  }

  /** Runs a handler in its span's context; a handler that throws ends its call UNKNOWN. */
  private invoke(exchange: Exchange, scope: Context | undefined, run: () => void): void {
    try {
      if (scope === undefined) run();
      else context.with(scope, run);
    } catch (err) {
      this.options.logger.error({ err, method: exchange.route.method.path }, 'grpc handler threw');
      exchange.finish({ code: GrpcStatus.UNKNOWN, details: 'Unknown error' });
    }
  }
}
