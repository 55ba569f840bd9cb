import { EventEmitter } from 'node:events';
import type { GrpcError } from './grpc-status.js';

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

/** What every handler is told besides its request: whether its caller still waits, and until when. */
export interface CallContext {
  /**
   * Aborted once nobody waits for the answer: the client reset the stream or went away, the
   * deadline passed, or the server is cutting the connection. Work not yet done should not start.
   */
  readonly signal: AbortSignal;
  /** Whether `signal` is aborted (cheaper than creating the signal to ask it). */
  readonly cancelled: boolean;
  /** When the call must be over, in Unix ms: the client's grpc-timeout, capped by the server's maximum call duration. */
  readonly deadline: number | undefined;
  /**
   * Whether an answer of about `bytes` fits the connection's and the process' budgets now: a
   * handler that knows its answer is large asks before building it (an answer that does not fit
   * is refused RESOURCE_EXHAUSTED anyway, but only once built).
   */
  hasRoom(bytes: number): boolean;
}

/** What a unary handler is given: the decoded request and its call's context. */
export interface UnaryCall<Request> extends CallContext {
  readonly request: Request;
}

/** A unary handler's answer: an error (its status, as grpc-js' `{ code, details }`, an Error may carry them) or the response. */
export type UnaryCallback<Response> = (error: Partial<GrpcError> | null, response?: Response) => void;

export type UnaryHandler<Request, Response> = (call: UnaryCall<Request>, callback: UnaryCallback<Response>) => void;

/** What a streaming call needs of the call it belongs to (call.ts). */
export interface StreamingCallPort {
  readonly signal: AbortSignal;
  readonly deadline: number | undefined;
  write(message: unknown): boolean;
  /** Messages written and not yet handed to the connection. */
  readonly unsentMessages: number;
  /** Whether answers of `bytes` more fit within the connection's and the process' budgets now. */
  hasRoom(bytes: number): boolean;
  finish(error: GrpcError | undefined): void;
  fail(error: unknown): void;
}

/**
 * A streaming call as its handler sees it, with grpc-js' conventions. Events: `data` (each request
 * message of a bidirectional call), `end` (the client finished sending), `cancelled` (the client
 * went away or the deadline passed; nothing more is sent), `close` (the call is over).
 * `emit('error', { code, details })` ends the call with that status.
 */
export class GrpcStreamCall<Request, Response> extends EventEmitter implements CallContext {
  /** The request of a server-streaming call (a bidirectional call's arrive as `data`). */
  request!: Request;
  cancelled = false;

  constructor(private readonly call: StreamingCallPort) {
    super();
    this.on('error', (error: unknown) => call.fail(error));
  }

  get signal(): AbortSignal {
    return this.call.signal;
  }

  get deadline(): number | undefined {
    return this.call.deadline;
  }

  /** Sends one message; false once the call is over (or was ended because its answers exceeded the budgets). */
  write(message: Response): boolean {
    return this.call.write(message);
  }

  /** Messages written and not yet handed to the connection (a client reading slowly). */
  get writableLength(): number {
    return this.call.unsentMessages;
  }

  /**
   * Whether a message of about `bytes` may be written now without going past the connection's or
   * the process' budget of unsent answers. A handler that may skip messages (Subscribe leaves a gap
   * in its sequence) asks before writing; a write past the budgets ends the call RESOURCE_EXHAUSTED.
   */
  hasRoom(bytes: number): boolean {
    return this.call.hasRoom(bytes);
  }

  /** Ends the call with OK. */
  end(): void {
    this.call.finish(undefined);
  }
}

export type ServerStreamingHandler<Request, Response> = (call: GrpcStreamCall<Request, Response>) => void;
