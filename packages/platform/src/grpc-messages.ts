import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * gRPC's length-prefixed messages on an HTTP/2 stream (gRPC over HTTP/2, "Length-Prefixed-Message"):
 * a compressed flag byte, a 4-byte big-endian length, the message.
 */
const PREFIX_BYTES = 5;

/** A call's outcome that is not OK, as the trailers carry it. */
export interface GrpcError {
  code: GrpcStatus;
  details: string;
}

/** One framed message: the prefix (uncompressed) then the message, in one buffer. */
export function frameMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, PREFIX_BYTES);
  return framed;
}

/**
 * Splits a stream's DATA into messages as they arrive. A message is refused from its prefix alone
 * when it is larger than `maxBytes` (nothing more of it is buffered), or when it says it is
 * compressed: the server accepts identity only (a call naming another `grpc-encoding` is refused
 * before its messages are read).
 */
export class MessageReader {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** The pending message's length with its prefix, once its prefix has arrived. */
  private frameBytes: number | undefined;

  constructor(
    private readonly maxBytes: number,
    private readonly onMessage: (message: Buffer) => void,
  ) {}

  /** Takes one chunk; answers the error that ends the call, if the chunk holds one. */
  push(chunk: Buffer): GrpcError | undefined {
    // The usual case, a whole message in one chunk with nothing before it, needs no copy.
    if (this.pendingBytes === 0 && isOneMessage(chunk)) {
      const refused = refusal(chunk, this.maxBytes);
      if (refused === undefined) this.onMessage(chunk.subarray(PREFIX_BYTES));
      return refused;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    while (this.pendingBytes >= PREFIX_BYTES) {
      const refused = this.frameBytes === undefined ? this.readPrefix() : undefined;
      if (refused !== undefined) return refused;
      // Joined once the whole message is here: a message sent in many chunks is copied once.
      if (this.pendingBytes < this.frameBytes!) return undefined;
      this.takeMessage(this.frameBytes!);
    }
    return undefined;
  }

  /** Whether the stream ended between messages (not inside one). */
  get complete(): boolean {
    return this.pendingBytes === 0;
  }

  private readPrefix(): GrpcError | undefined {
    const head = this.pending[0]!.length >= PREFIX_BYTES ? this.pending[0]! : this.joined();
    const refused = refusal(head, this.maxBytes);
    if (refused === undefined) this.frameBytes = PREFIX_BYTES + head.readUInt32BE(1);
    return refused;
  }

  private takeMessage(end: number): void {
    const buffered = this.joined();
    const rest = buffered.subarray(end);
    this.pending = rest.length === 0 ? [] : [rest];
    this.pendingBytes = rest.length;
    this.frameBytes = undefined;
    this.onMessage(buffered.subarray(PREFIX_BYTES, end));
  }

  private joined(): Buffer {
    const buffered = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    this.pending = [buffered];
    return buffered;
  }
}

const isOneMessage = (chunk: Buffer): boolean => chunk.length >= PREFIX_BYTES && chunk.readUInt32BE(1) === chunk.length - PREFIX_BYTES;

/** Why a message is refused from its prefix alone, if it is. */
function refusal(prefix: Buffer, maxBytes: number): GrpcError | undefined {
  if (prefix[0] !== 0) return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without a grpc-encoding: this server accepts identity only' };
  const length = prefix.readUInt32BE(1);
  if (length > maxBytes) return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Received message larger than max (${length} vs. ${maxBytes})` };
  return undefined;
}

const TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 0.001, n: 0.000_001 };

/**
 * The `grpc-timeout` header in milliseconds: at most 8 digits and a unit (H M S m u n). Undefined
 * when absent; NaN when malformed.
 */
export function parseGrpcTimeout(header: string | string[] | undefined): number | undefined {
  if (header === undefined) return undefined;
  const match = typeof header === 'string' ? /^(\d{1,8})([HMSmun])$/.exec(header) : null;
  return match === null ? Number.NaN : Number(match[1]) * TIMEOUT_UNIT_MS[match[2]!]!;
}

/**
 * The `grpc-message` header: percent-encoded as grpc-js' server does (`encodeURI`, which its
 * clients undo with `decodeURI`; other clients percent-decode it), a lone surrogate replaced first
 * (U+FFFD) since encodeURI throws on one.
 */
export const encodeGrpcMessage = (details: string): string => encodeURI(details.replace(/\p{Surrogate}/gu, '\uFFFD'));
