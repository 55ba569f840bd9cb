import { ServerInterceptingCall, status, type ServerInterceptingCallInterface, type ServerInterceptor, type ServiceDefinition } from '@grpc/grpc-js';

/** How a unary RPC answers its call: once, with the response or with a status. */
export interface UnaryReply<Res> {
  ok(response: Res): void;
  fail(error: { code: status; details: string }): void;
}

/** A unary RPC on its decoded request (never throws: it answers every outcome through `reply`). */
export type UnaryRpc<Req, Res> = (request: Req, reply: UnaryReply<Res>) => void;

const OK: Parameters<ServerInterceptingCallInterface['sendStatus']>[0] = Object.freeze({ code: status.OK, details: 'OK', metadata: null });

/**
 * One unary call answered by the interceptor: it is the listener of the call below it, reads the
 * one request message and sends the RPC's answer. grpc-js' unary handler starts it and is never
 * told anything, so grpc-js never builds what it hands a handler per call (a Writable
 * `ServerUnaryCall`, a callback and their closures). A `ServerInterceptingCall` (what an
 * interceptor returns) that takes the call over in `start`, instead of one built from a
 * responder and listener: those cost more objects per call than the handler path saves. The
 * receiving rules and status texts are grpc-js' own.
 */
class UnaryAnswer extends ServerInterceptingCall implements UnaryReply<unknown> {
  private request: unknown;
  private received = false;
  private readonly sendOk = (): void => this.below.sendStatus(OK);

  constructor(
    private readonly below: ServerInterceptingCallInterface,
    private readonly rpc: UnaryRpc<unknown, unknown>,
    private readonly path: string,
  ) {
    super(below);
  }

  override start(): void {
    this.below.start(this);
  }

  onReceiveMetadata(): void {
    this.below.startRead();
  }

  onReceiveMessage(message: unknown): void {
    if (this.received) {
      this.fail({ code: status.UNIMPLEMENTED, details: `Received a second request message for server streaming method ${this.path}` });
      return;
    }
    this.request = message;
    this.received = true;
    this.below.startRead();
  }

  onReceiveHalfClose(): void {
    if (!this.received) {
      this.fail({ code: status.UNIMPLEMENTED, details: `Received no request message for server streaming method ${this.path}` });
      return;
    }
    try {
      this.rpc(this.request, this);
    } catch {
      this.fail({ code: status.UNKNOWN, details: 'Unknown error' });
    }
  }

  /** Deadline and cancellation stay the call's: it ends the stream, and a later send does nothing. */
  onCancel(): void {}

  ok(response: unknown): void {
    this.below.sendMessage(response, this.sendOk);
  }

  fail(error: { code: status; details: string }): void {
    this.below.sendStatus({ code: error.code, details: error.details, metadata: null });
  }
}

/**
 * A server interceptor (grpc-js' `interceptors` option, gRFC L112) that answers the unary methods
 * of `definition` named in `rpcs` itself, on the request grpc-js decoded with the definition's
 * deserializer; every other call (other services, streaming methods) passes through. The
 * server's own handlers for those methods are never reached. Such a call costs the same HTTP/2
 * stream, deadline, message limits and status trailers as through a handler, without the per-call
 * stream object and callbacks grpc-js builds for a handler.
 */
export function answeringUnary(definition: ServiceDefinition, rpcs: Readonly<Record<string, UnaryRpc<never, unknown>>>): ServerInterceptor {
  const byPath = new Map<string, UnaryRpc<unknown, unknown>>();
  for (const [name, rpc] of Object.entries(rpcs)) {
    const method = definition[name];
    if (method === undefined || method.requestStream || method.responseStream) throw new Error(`${name} is not a unary method of the service`);
    byPath.set(method.path, rpc as UnaryRpc<unknown, unknown>);
  }
  return (method, call) => {
    const rpc = byPath.get(method.path);
    return rpc === undefined ? new ServerInterceptingCall(call) : new UnaryAnswer(call, rpc, method.path);
  };
}
