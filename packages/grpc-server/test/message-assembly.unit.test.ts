import { describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import type { GrpcError } from '../src/grpc-status.js';
import { frameMessage, MessageAssembler } from '../src/message-assembly.js';

/** Feeds `chunks` to an assembler; the messages it gave, the first error, what it reserved and whether it ended between messages. */
function assemble(chunks: Buffer[], maxBytes = 1024, room = Number.POSITIVE_INFINITY) {
  const messages: Buffer[] = [];
  const reserved: number[] = [];
  let left = room;
  const assembler = new MessageAssembler(maxBytes, {
    reserve: (bytes) => {
      if (bytes > left) return false;
      left -= bytes;
      reserved.push(bytes);
      return true;
    },
    message: (bytes) => messages.push(bytes),
  });
  let error: GrpcError | undefined;
  for (const chunk of chunks) {
    error ??= assembler.push(chunk);
    if (error !== undefined) break;
  }
  return { messages, texts: messages.map((message) => message.toString()), error, reserved, complete: assembler.complete };
}

/** `bytes` cut into pieces of `size` bytes. */
const pieces = (bytes: Buffer, size: number): Buffer[] => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('gRPC length-prefixed messages', () => {
  it('should frame a message as the protocol says: flag 0, big-endian length, the bytes', () => {
    expect([...frameMessage(Buffer.from('hi'))]).toEqual([0, 0, 0, 0, 2, 0x68, 0x69]);
    expect([...frameMessage(Buffer.alloc(0))]).toEqual([0, 0, 0, 0, 0]);
  });

  it('should assemble messages however the stream cuts them: one per chunk, several in one, one over many, prefixes split', () => {
    const texts = ['first', '', 'third message', 'x'.repeat(300)];
    const stream = Buffer.concat(texts.map((text) => frameMessage(Buffer.from(text))));
    for (const size of [1, 2, 3, 4, 5, 6, 7, 64, stream.length]) {
      expect(assemble(pieces(stream, size))).toMatchObject({ texts, error: undefined, complete: true, reserved: texts.map((text) => text.length) });
    }
  });

  it('should assemble a message sent one byte per DATA frame into one buffer of its own size', () => {
    const message = Buffer.alloc(60_000, 7);
    const { messages } = assemble(pieces(frameMessage(message), 1), 64 * 1024);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.equals(message)).toBe(true);
    // One allocation sized from the prefix: the message's own buffer, not a view of a larger one.
    expect(messages[0]!.buffer.byteLength).toBe(message.length);
  });

  it('should say when the stream stopped inside a message', () => {
    const framed = frameMessage(Buffer.from('cut short'));
    expect(assemble([framed.subarray(0, 3)]).complete).toBe(false);
    expect(assemble([framed.subarray(0, framed.length - 1)]).complete).toBe(false);
  });

  it('should refuse a message over the limit from its prefix, before the message arrives, and reserve nothing for it', () => {
    const prefix = Buffer.from([0, 0, 0, 4, 1]);
    expect(assemble([prefix], 1024)).toMatchObject({ error: { code: status.RESOURCE_EXHAUSTED, details: 'Received message larger than max (1025 vs. 1024)' }, reserved: [] });
    expect(assemble([frameMessage(Buffer.alloc(1024))], 1024)).toMatchObject({ texts: ['\0'.repeat(1024)], error: undefined });
    // A prefix split over chunks is judged once it is whole.
    expect(assemble([prefix.subarray(0, 2), prefix.subarray(2)], 1024).error?.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('should refuse a message its budget has no room for, RESOURCE_EXHAUSTED, before any of it is kept', () => {
    const framed = frameMessage(Buffer.alloc(100));
    expect(assemble([framed], 1024, 99)).toMatchObject({ error: { code: status.RESOURCE_EXHAUSTED }, messages: [], reserved: [] });
    expect(assemble(pieces(framed, 7), 1024, 99)).toMatchObject({ error: { code: status.RESOURCE_EXHAUSTED }, messages: [], reserved: [] });
    expect(assemble([framed], 1024, 100)).toMatchObject({ error: undefined, reserved: [100] });
  });

  it('should refuse a message whose compressed flag is set (identity only)', () => {
    const compressed = frameMessage(Buffer.from('zz'));
    compressed[0] = 1;
    expect(assemble([compressed]).error?.code).toBe(status.INTERNAL);
    expect(assemble([frameMessage(Buffer.from('ok')), compressed])).toMatchObject({ texts: ['ok'], error: { code: status.INTERNAL } });
  });
});
