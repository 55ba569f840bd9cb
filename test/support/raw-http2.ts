// A raw HTTP/2 client over TCP that writes frames byte by byte as an attacker would: what
// node:http2's client cannot send (a ping or SETTINGS flood past its own limits, one-byte DATA
// frames, RST_STREAM without END_STREAM, no preface at all), and the frames the server answers,
// as they arrive. Header blocks are HPACK literals without indexing and without Huffman coding, so
// any server decodes them; the server's own header blocks are not decoded (tests read frame types,
// flags, codes and GOAWAY debug data, and read statuses with a real client).
import { connect, type Socket } from 'node:net';

export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const;
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const;
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

/** One frame the server sent. */
export interface Frame {
  type: number;
  flags: number;
  streamId: number;
  payload: Buffer;
}

export function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const header = Buffer.alloc(9);
  header.writeUIntBE(payload.length, 0, 3);
  header[3] = type;
  header[4] = flags;
  header.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([header, payload]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541, 5.1). */
function hpackInteger(value: number, prefixBits: number, firstByte = 0): Buffer {
  const max = (1 << prefixBits) - 1;
  if (value < max) return Buffer.from([firstByte | value]);
  const bytes = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    bytes.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return Buffer.from(bytes);
}

const hpackString = (text: string): Buffer => {
  const bytes = Buffer.from(text, 'latin1');
  return Buffer.concat([hpackInteger(bytes.length, 7), bytes]);
};

/** A header block of literal fields without indexing (RFC 7541, 6.2.2), in the order given. */
export function headerBlock(fields: ReadonlyArray<readonly [string, string]>): Buffer {
  return Buffer.concat(fields.flatMap(([name, value]) => [Buffer.from([0]), hpackString(name), hpackString(value)]));
}

export const settingsFrame = (entries: ReadonlyArray<readonly [number, number]> = []): Buffer => {
  const payload = Buffer.alloc(entries.length * 6);
  entries.forEach(([id, value], i) => {
    payload.writeUInt16BE(id, i * 6);
    payload.writeUInt32BE(value, i * 6 + 2);
  });
  return frame(FRAME.SETTINGS, 0, 0, payload);
};
export const settingsAck = (): Buffer => frame(FRAME.SETTINGS, FLAG.ACK, 0);
export const headersFrame = (streamId: number, fields: ReadonlyArray<readonly [string, string]>, endStream = false): Buffer =>
  frame(FRAME.HEADERS, FLAG.END_HEADERS | (endStream ? FLAG.END_STREAM : 0), streamId, headerBlock(fields));
/** A header block larger than one frame may carry (16 KiB): HEADERS then CONTINUATION frames. */
export function largeHeaders(streamId: number, fields: ReadonlyArray<readonly [string, string]>, endStream = false): Buffer {
  const block = headerBlock(fields);
  const pieces = Array.from({ length: Math.ceil(block.length / 16_384) }, (_, i) => block.subarray(i * 16_384, (i + 1) * 16_384));
  return Buffer.concat(
    pieces.map((piece, i) => {
      const last = i === pieces.length - 1 ? FLAG.END_HEADERS : 0;
      return i === 0 ? frame(FRAME.HEADERS, last | (endStream ? FLAG.END_STREAM : 0), streamId, piece) : frame(FRAME.CONTINUATION, last, streamId, piece);
    }),
  );
}
export const dataFrame = (streamId: number, payload: Buffer, endStream = false): Buffer => frame(FRAME.DATA, endStream ? FLAG.END_STREAM : 0, streamId, payload);
export const rstStreamFrame = (streamId: number, code: number): Buffer => {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(code, 0);
  return frame(FRAME.RST_STREAM, 0, streamId, payload);
};
export const pingFrame = (data: Buffer = Buffer.alloc(8), ack = false): Buffer => frame(FRAME.PING, ack ? FLAG.ACK : 0, 0, data);
export const windowUpdateFrame = (streamId: number, increment: number): Buffer => {
  const payload = Buffer.alloc(4);
  payload.writeUInt32BE(increment, 0);
  return frame(FRAME.WINDOW_UPDATE, 0, streamId, payload);
};

/** The request headers of a gRPC call, as the fields of a raw HEADERS frame. */
export const grpcRequestFields = (path: string, authority: string, extra: ReadonlyArray<readonly [string, string]> = []): Array<readonly [string, string]> => [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', path],
  [':authority', authority],
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
  ...extra,
];

/** A gRPC length-prefixed message (uncompressed). */
export const grpcFrame = (message: Buffer): Buffer => {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
};

export interface RawHttp2Connection {
  socket: Socket;
  /** Every frame the server sent so far, in order. */
  readonly frames: readonly Frame[];
  /** Whether the server closed the connection (or it failed). */
  readonly closed: boolean;
  /** Bytes written; resolves once the kernel took them (or the connection is gone). */
  send(...chunks: Buffer[]): Promise<void>;
  /** The first frame (already received or to come) that `match` accepts, or undefined once the connection closed or `timeoutMs` passed. */
  waitFor(match: (frame: Frame) => boolean, timeoutMs?: number): Promise<Frame | undefined>;
  /** Resolves once the server closed the connection, or false after `timeoutMs`. */
  waitClosed(timeoutMs?: number): Promise<boolean>;
  destroy(): void;
}

export interface RawConnectOptions {
  /** Send the client preface and an empty SETTINGS frame at once (default true). */
  preface?: boolean;
  /** Acknowledge the server's SETTINGS (default true), as a client must. */
  ackSettings?: boolean;
  /** Read what the server sends (default true); false leaves it in the socket, a client that never reads. */
  read?: boolean;
  /** Answer the server's PINGs (default true), as a client must; false: a half-open peer. */
  ackPings?: boolean;
}

/** A TCP connection to `port` on 127.0.0.1 speaking raw HTTP/2 frames. */
export async function rawHttp2(port: number, options: RawConnectOptions = {}): Promise<RawHttp2Connection> {
  const socket = connect(port, '127.0.0.1');
  socket.setNoDelay(true);
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const frames: Frame[] = [];
  const waiters = new Set<() => void>();
  let closed = false;
  let pending: Buffer = Buffer.alloc(0);
  const notify = (): void => waiters.forEach((wake) => wake());
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    notify();
  });
  /** What a client must answer: the server's SETTINGS and PINGs (unless told not to). */
  const answer = (received: Frame): void => {
    if ((received.flags & FLAG.ACK) !== 0 || socket.destroyed) return;
    if (received.type === FRAME.SETTINGS && options.ackSettings !== false) socket.write(settingsAck());
    if (received.type === FRAME.PING && options.ackPings !== false) socket.write(pingFrame(received.payload, true));
  };
  if (options.read === false) socket.pause();
  else
    socket.on('data', (chunk: Buffer) => {
      pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
      while (pending.length >= 9 && pending.length >= 9 + pending.readUIntBE(0, 3)) {
        const length = pending.readUIntBE(0, 3);
        const received = { type: pending[3]!, flags: pending[4]!, streamId: pending.readUInt32BE(5) & 0x7fffffff, payload: pending.subarray(9, 9 + length) };
        pending = pending.subarray(9 + length);
        frames.push(received);
        answer(received);
      }
      notify();
    });
  const send = (...chunks: Buffer[]): Promise<void> =>
    new Promise((resolve) => {
      if (socket.destroyed) return resolve();
      socket.write(Buffer.concat(chunks), () => resolve());
    });
  if (options.preface !== false) await send(PREFACE, settingsFrame());
  const waitFor = (match: (frame: Frame) => boolean, timeoutMs = 5000): Promise<Frame | undefined> =>
    new Promise((resolve) => {
      let seen = 0;
      const check = (): void => {
        for (; seen < frames.length; seen++) {
          if (match(frames[seen]!)) return finish(frames[seen]);
        }
        if (closed) finish(undefined);
      };
      const timer = setTimeout(() => finish(undefined), timeoutMs);
      const finish = (found: Frame | undefined): void => {
        clearTimeout(timer);
        waiters.delete(check);
        resolve(found);
      };
      waiters.add(check);
      check();
    });
  return {
    socket,
    frames,
    get closed() {
      return closed;
    },
    send,
    waitFor,
    async waitClosed(timeoutMs = 5000) {
      await waitFor(() => false, timeoutMs);
      return closed;
    },
    destroy: () => socket.destroy(),
  };
}

/** The error code of a RST_STREAM or GOAWAY frame, and a GOAWAY's last stream id and debug data. */
export const rstCode = (received: Frame): number => received.payload.readUInt32BE(0);
export const goaway = (received: Frame): { lastStreamId: number; code: number; debugData: string } => ({
  lastStreamId: received.payload.readUInt32BE(0) & 0x7fffffff,
  code: received.payload.readUInt32BE(4),
  debugData: received.payload.subarray(8).toString('latin1'),
});
