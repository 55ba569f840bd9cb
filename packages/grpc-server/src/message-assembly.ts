import { status as GrpcStatus } from '@grpc/grpc-js';
import type { GrpcError } from './grpc-status.js';

/**
 * gRPC's length-prefixed messages on an HTTP/2 stream (PROTOCOL-HTTP2, "Length-Prefixed-Message"):
 * a compressed flag byte, a 4-byte big-endian length, the message.
 */
export const PREFIX_BYTES = 5;

/** A message's prefix alone: uncompressed, its length. */
export function prefixOf(length: number): Buffer {
  const prefix = Buffer.allocUnsafe(PREFIX_BYTES);
  prefix[0] = 0;
  prefix.writeUInt32BE(length, 1);
  return prefix;
}

/** One framed message: the prefix (uncompressed) then the message, in one buffer. */
export function frameMessage(message: Uint8Array): Buffer {
  const framed = Buffer.allocUnsafe(PREFIX_BYTES + message.length);
  framed[0] = 0;
  framed.writeUInt32BE(message.length, 1);
  framed.set(message, PREFIX_BYTES);
  return framed;
}

/** Where assembled messages go, and the budget they are assembled in. */
export interface MessageSink {
  /** Reserves room for a message of `bytes` about to be assembled; false when there is none (the call is then refused). */
  reserve(bytes: number): boolean;
  /** A whole message (without its prefix). */
  message(bytes: Buffer): void;
}

/** ES2024's ArrayBuffer.prototype.transfer (Node 21 and later), not yet in TypeScript's lib here. */
interface Transferable {
  transfer(newByteLength?: number): ArrayBuffer;
}

const transferable = (buffer: ArrayBufferLike): buffer is ArrayBuffer & Transferable => typeof (buffer as Partial<Transferable>).transfer === 'function';

/** Buffers this large or larger come from an ArrayBuffer of their own, never Node's shared pool (Buffer.poolSize / 2). */
const OWN_BUFFER_BYTES = 8192;

export const SERVER_BUSY: GrpcError = { code: GrpcStatus.RESOURCE_EXHAUSTED, details: 'The server has no room for this message now; retry later' };

/**
 * Assembles a stream's DATA into messages. Each message goes into one buffer allocated from its
 * prefix, after the prefix was checked (a message over `maxBytes`, or flagged compressed, is refused
 * before any of it is kept) and the budget reserved its size: whatever the sender's framing (60,000
 * one-byte DATA frames), a message costs its own size and no more, and nothing is kept per frame.
 * A message that arrives whole in one chunk (the usual case) is passed on without a copy.
 */
export class MessageAssembler {
  /** The prefix, when it arrived split over chunks (rare: allocated only then). */
  private prefix: Buffer | undefined;
  private prefixFilled = 0;
  private pending: Buffer | undefined;
  private filled = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly sink: MessageSink,
  ) {}

  /** Takes one chunk; answers the error that ends the call, if the chunk holds one. */
  push(chunk: Buffer): GrpcError | undefined {
    if (this.pending === undefined && this.prefixFilled === 0 && isOneMessage(chunk)) {
      const refused = this.begin(chunk, false);
      if (refused === undefined) this.sink.message(chunk.subarray(PREFIX_BYTES));
      return refused;
    }
    let at = 0;
    while (at < chunk.length) {
      if (this.pending !== undefined) {
        at = this.fill(chunk, at);
        continue;
      }
      const [head, next] = this.takePrefix(chunk, at);
      at = next;
      if (head === undefined) return undefined;
      const refused = this.begin(head, true);
      if (refused !== undefined) return refused;
    }
    return undefined;
  }

  /** Whether the stream ended between messages (not inside one). */
  get complete(): boolean {
    return this.pending === undefined && this.prefixFilled === 0;
  }

  /**
   * The prefix starting at `at` (a view of the chunk when it holds all of it, else its bytes
   * gathered: undefined until it is whole), and where the chunk's rest starts.
   */
  private takePrefix(chunk: Buffer, at: number): [Buffer | undefined, number] {
    if (this.prefixFilled === 0 && chunk.length - at >= PREFIX_BYTES) return [chunk.subarray(at, at + PREFIX_BYTES), at + PREFIX_BYTES];
    this.prefix ??= Buffer.allocUnsafe(PREFIX_BYTES);
    const copied = chunk.copy(this.prefix, this.prefixFilled, at, Math.min(chunk.length, at + PREFIX_BYTES - this.prefixFilled));
    this.prefixFilled += copied;
    return [this.prefixFilled < PREFIX_BYTES ? undefined : this.prefix, at + copied];
  }

  /** Copies what the chunk holds of the pending message from `at`; answers where the copy stopped. */
  private fill(chunk: Buffer, at: number): number {
    const pending = this.pending!;
    const copied = chunk.copy(pending, this.filled, at, Math.min(chunk.length, at + pending.length - this.filled));
    this.filled += copied;
    if (this.filled === pending.length) this.deliver();
    return at + copied;
  }

  /** Checks a prefix and reserves its message; `assemble`: allocate the buffer the message is copied into. */
  private begin(prefix: Buffer, assemble: boolean): GrpcError | undefined {
    this.prefixFilled = 0;
    if (prefix[0] !== 0) return { code: GrpcStatus.INTERNAL, details: 'Received a compressed message without a grpc-encoding: this server accepts identity only' };
    const length = prefix.readUInt32BE(1);
    if (length > this.maxBytes) return { code: GrpcStatus.RESOURCE_EXHAUSTED, details: `Received message larger than max (${length} vs. ${this.maxBytes})` };
    if (!this.sink.reserve(length)) return SERVER_BUSY;
    if (!assemble) return undefined;
    this.pending = Buffer.allocUnsafe(length);
    this.filled = 0;
    if (length === 0) this.deliver();
    return undefined;
  }

  /**
   * Gives back at once the memory of a message left unfinished (its call ended): a buffer of its
   * own is detached (ArrayBuffer.prototype.transfer), which frees its memory now instead of at
   * the next garbage collection. An idle process collects none: after 5,000 never-ending 512 KiB
   * messages the budgets' 32 MiB of them was still held, as V8's external memory, 10 s after the
   * attackers left, and malloc's heap with it. Nothing else holds such a buffer.
   */
  release(): void {
    const pending = this.pending;
    this.pending = undefined;
    if (pending !== undefined && pending.byteOffset === 0 && pending.buffer.byteLength === pending.byteLength && pending.byteLength >= OWN_BUFFER_BYTES && transferable(pending.buffer)) pending.buffer.transfer(0);
  }

  private deliver(): void {
    const message = this.pending!;
    this.pending = undefined;
    this.sink.message(message);
  }
}

const isOneMessage = (chunk: Buffer): boolean => chunk.length >= PREFIX_BYTES && chunk.readUInt32BE(1) === chunk.length - PREFIX_BYTES;
