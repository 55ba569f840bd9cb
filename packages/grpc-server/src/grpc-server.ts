import http2, { constants as h2, type Http2Server, type IncomingHttpHeaders, type ServerHttp2Session, type ServerHttp2Stream } from 'node:http2';
import type { AddressInfo, Socket } from 'node:net';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { context } from '@opentelemetry/api';
import { ProcessBudget } from './budgets.js';
import { Call, refuse } from './call.js';
import { CoarseClock } from './coarse-clock.js';
import { Connection, type ConnectionContext } from './connection.js';
import { parseGrpcTimeout } from './grpc-timeout.js';
import type { GrpcMethodDefinition, ServerStreamingHandler, UnaryHandler } from './handlers.js';
import { MessageAssembler } from './message-assembly.js';
import { resolveLimits, type GrpcServerLimits, type GrpcServerOptions, type LimitName } from './options.js';
import { INVALID_TIMEOUT, refusalOf } from './request-checks.js';
import { routeOf, type Route } from './routes.js';

/**
 * A stream's cost beyond its headers' bytes (its Http2Stream, the call, their listeners and
 * buffers: about 4 to 8 KiB of heap measured under 5,000 streams), charged to the budgets while it
 * is open, so that many small streams count too.
 */
const STREAM_OVERHEAD_BYTES = 4096;
const SWEEP_INTERVAL_MS = 1000;
const noop = (): void => undefined;

/**
 * A gRPC server on Node's own HTTP/2 (node:http2) for unary, server-streaming and bidirectional
 * methods of service definitions as proto-loader and grpc-js make them, with grpc-js' handler
 * conventions, so grpc-health-check's and @grpc/reflection's services add themselves to it
 * (`addToServer`). What of the protocol it speaks, what it refuses and every limit: README.md.
 * Client-streaming methods are not supported (addService refuses them).
 */
export class GrpcServer {
  private readonly routes = new Map<string, Route>();
  private readonly connections = new Map<ServerHttp2Session, Connection>();
  /**
   * The TCP connections, open until the peer closed its side too: a session closed gracefully
   * ends its socket and waits for the peer's FIN, which a frozen client never sends, and the
   * server's close waits for every socket.
   */
  private readonly sockets = new Set<Socket>();
  private readonly server: Http2Server;
  private readonly limits: GrpcServerLimits;
  private readonly budget: ProcessBudget;
  private readonly clock = new CoarseClock();
  private readonly onLimit: (limit: LimitName) => void;
  private readonly context: ConnectionContext;
  private sweeper: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(private readonly options: GrpcServerOptions) {
    this.limits = resolveLimits(options);
    this.budget = new ProcessBudget(this.limits.processBufferBytes);
    this.onLimit = options.onLimit ?? noop;
    this.context = { limits: this.limits, processBudget: this.budget, clock: this.clock, logger: options.logger, onLimit: this.onLimit };
    const { limits } = this;
    this.server = http2.createServer({
      // Streams start with HTTP/2's default window; a connection's grow once it carries a large message (connection.ts).
      settings: { maxConcurrentStreams: limits.maxConcurrentStreams, maxHeaderListSize: limits.maxMetadataBytes },
      // Node's own cap on what a session holds (queued frames, header tables, unsent data), in MB:
      // above this server's budget for one connection, so the budget acts first and names the limit.
      maxSessionMemory: Math.ceil(limits.connectionBufferBytes / 2 ** 20) + 8,
    });
    this.server.maxConnections = limits.maxConnections;
    this.server.on('drop', () => this.onLimit('max_connections'));
    this.server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    this.server.on('session', (session: ServerHttp2Session) => this.accept(session));
    this.server.on('sessionError', (err: Error) => options.logger.debug({ err }, 'grpc connection error'));
    this.server.on('stream', (stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]) => this.dispatch(stream, headers, flags, rawHeaders));
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
        this.sweeper = setInterval(() => this.sweep(), SWEEP_INTERVAL_MS);
        this.sweeper.unref();
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /**
   * Closes every connection gracefully (two-step GOAWAY), then stops listening: calls in flight
   * finish, idle connections close at once. Connections still open after `graceMs` are cut.
   */
  close(graceMs: number): Promise<void> {
    this.closing = true;
    const force = setTimeout(() => {
      for (const session of this.connections.keys()) session.destroy();
      for (const socket of this.sockets) socket.destroy();
    }, graceMs);
    const drained = Promise.all([...this.connections.values()].map((connection) => connection.drain('shutdown')));
    // Node's own close sends every session its final GOAWAY at once: it comes after the first step.
    return drained.then(
      () =>
        new Promise((resolve) => {
          this.server.close(() => {
            clearTimeout(force);
            clearInterval(this.sweeper);
            resolve();
          });
        }),
    );
  }

  /** Bytes the calls of every connection hold now (requests, headers, unsent answers): what the budgets bound. */
  get bufferedBytes(): number {
    return this.budget.used;
  }

  private accept(session: ServerHttp2Session): void {
    const connection = new Connection(session, this.context);
    this.connections.set(session, connection);
    session.once('close', () => this.connections.delete(session));
    if (this.closing) void connection.drain('shutdown');
  }

  private sweep(): void {
    const now = this.clock.tick();
    for (const connection of this.connections.values()) connection.sweep(now);
  }

  private dispatch(stream: ServerHttp2Stream, headers: IncomingHttpHeaders, flags: number, rawHeaders: string[]): void {
    // A stream reset or torn down emits 'error' after its outcome is already decided (or moot).
    stream.on('error', noop);
    const connection = this.countedOn(stream);
    if (connection === undefined) return;
    // Reset already: Node emits 'stream' after it read all a socket read brought, RST_STREAMs
    // included. Nothing is made for such a stream (no call, timer or listeners: a flood of HEADERS
    // and RST_STREAM pairs costs Node's own work and this), and it counts against the allowance
    // of resets now, not once its 'close' comes after the rest of the read.
    if (stream.closed) return connection.cancelledByClient();
    let metadataBytes = 0;
    // An indexed loop: a for-of (or a reduce's callback) costs an allocation per call here.
    for (let i = 0; i < rawHeaders.length; i++) metadataBytes += rawHeaders[i]!.length;
    if (metadataBytes > this.limits.maxMetadataBytes) return connection.oversizedMetadata(stream);
    const route = this.routes.get(headers[':path'] ?? '');
    const requestEnded = (flags & h2.NGHTTP2_FLAG_END_STREAM) !== 0;
    const refusal = refusalOf(headers, route);
    if (refusal !== undefined) return refuse(stream, refusal, requestEnded);
    const timeoutMs = parseGrpcTimeout(headers['grpc-timeout']);
    if (Number.isNaN(timeoutMs)) return refuse(stream, INVALID_TIMEOUT, requestEnded);
    const headerBytes = STREAM_OVERHEAD_BYTES + metadataBytes;
    if (!connection.budget.take(headerBytes)) {
      // No processing happened: REFUSED_STREAM tells the client it may retry (UNAVAILABLE).
      this.onLimit('stream_budget');
      return void stream.close(h2.NGHTTP2_REFUSED_STREAM);
    }
    const call = new Call(stream, route!, connection, headerBytes);
    call.begin(headers, timeoutMs);
    if (route!.kind === 'bidi') this.serveBidi(call);
    else this.serveSingleRequest(call);
  }

  /** The stream's connection once it counted the stream; undefined when the stream is refused or ended the connection (connection.ts, streamOpened). */
  private countedOn(stream: ServerHttp2Stream): Connection | undefined {
    const connection = this.connections.get(stream.session as ServerHttp2Session);
    if (connection === undefined) stream.close(h2.NGHTTP2_REFUSED_STREAM);
    return connection?.streamOpened() === true ? connection : undefined;
  }

  /** Unary and server-streaming calls: one request message, then (once the client's END_STREAM came) the handler. */
  private serveSingleRequest(call: Call): void {
    const { stream } = call;
    // The call is the assembler's sink: it keeps the message (call.ts, SingleRequest).
    const assembler = new MessageAssembler(this.limits.maxReceiveMessageBytes, call);
    call.assembler = assembler;
    stream.on('data', (chunk: Buffer) => {
      if (call.done) return;
      const error = assembler.push(chunk);
      call.received(chunk.length, !assembler.complete);
      if (error !== undefined) call.finish(error);
      else if (call.secondMessage) call.finish({ code: GrpcStatus.UNIMPLEMENTED, details: 'Received a second request message for a unary or server-streaming method' });
    });
    stream.on('end', () => {
      // A stream the client reset ends too (Node ends its readable side): then it is closed, the
      // call is cancelled, and its handler never runs.
      if (call.done || stream.closed) return;
      call.requestEnded = true;
      if (!assembler.complete) return call.finish({ code: GrpcStatus.INTERNAL, details: 'Received an incomplete message' });
      const message = call.requestMessage;
      if (message === undefined) return call.finish({ code: GrpcStatus.UNIMPLEMENTED, details: 'Received no request message' });
      call.requestMessage = undefined;
      if (!this.decode(call, message)) return;
      if (call.route.kind === 'unary') this.invoke(call, call.route.handler as UnaryHandler<unknown, unknown>, call, call.callback);
      else {
        const streamCall = call.streaming();
        streamCall.request = call.request;
        this.invoke(call, call.route.handler as ServerStreamingHandler<unknown, unknown>, streamCall, undefined);
      }
    });
  }

  /** Bidirectional calls: the handler at once, each request message as `data`, the client's end as `end`. */
  private serveBidi(call: Call): void {
    const { stream, route } = call;
    const streamCall = call.streaming();
    const assembler = (call.assembler = new MessageAssembler(this.limits.maxReceiveMessageBytes, {
      reserve: (bytes) => call.reserveRequest(bytes),
      message: (bytes) => {
        if (this.decode(call, bytes)) streamCall.emit('data', call.request);
        call.releaseRequest(bytes.length);
      },
    }));
    stream.on('data', (chunk: Buffer) => {
      if (call.done) return;
      const error = assembler.push(chunk);
      call.received(chunk.length, !assembler.complete);
      if (error !== undefined) call.finish(error);
    });
    stream.on('end', () => {
      if (call.done || stream.closed) return;
      call.requestEnded = true;
      if (!assembler.complete) call.finish({ code: GrpcStatus.INTERNAL, details: 'Received an incomplete message' });
      else streamCall.emit('end');
    });
    this.invoke(call, route.handler as ServerStreamingHandler<unknown, unknown>, streamCall, undefined);
  }

  /** Decodes a request message into `call.request`; false once the call is refused (INTERNAL, as grpc-js answers). */
  private decode(call: Call, bytes: Buffer): boolean {
    try {
      call.request = call.route.method.requestDeserialize(bytes);
      return true;
    } catch {
      call.finish({ code: GrpcStatus.INTERNAL, details: 'Error deserializing request' });
      return false;
    }
  }

  /** Runs a handler (given its arguments: no closure per call) in its span's context; a handler that throws ends its call UNKNOWN. */
  private invoke<A, B>(call: Call, handler: (a: A, b: B) => void, a: A, b: B): void {
    try {
      if (call.scope === undefined) handler(a, b);
      else context.with(call.scope, handler, undefined, a, b);
    } catch (err) {
      this.options.logger.error({ err, method: call.route.method.path }, 'grpc handler threw');
      call.finish({ code: GrpcStatus.UNKNOWN, details: 'Unknown error' });
    }
  }
}
