import { describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { MessageReader, encodeGrpcMessage, frameMessage, parseGrpcTimeout, type GrpcError } from '../src/grpc-messages.js';

/** Feeds `chunks` to a reader; the messages it gave and the first error it answered. */
function read(chunks: Buffer[], maxBytes = 1024): { messages: string[]; error: GrpcError | undefined; complete: boolean } {
  const messages: string[] = [];
  const reader = new MessageReader(maxBytes, (message) => messages.push(message.toString()));
  let error: GrpcError | undefined;
  for (const chunk of chunks) {
    error ??= reader.push(chunk);
    if (error !== undefined) break;
  }
  return { messages, error, complete: reader.complete };
}

/** `bytes` cut into pieces of `size` bytes. */
const pieces = (bytes: Buffer, size: number): Buffer[] => Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));

describe('gRPC length-prefixed messages', () => {
  it('should frame a message as the protocol says: flag 0, big-endian length, the bytes', () => {
    expect([...frameMessage(Buffer.from('hi'))]).toEqual([0, 0, 0, 0, 2, 0x68, 0x69]);
    expect([...frameMessage(Buffer.alloc(0))]).toEqual([0, 0, 0, 0, 0]);
  });

  it('should read messages however the stream cuts them: one per chunk, several in one, one over many, prefixes split', () => {
    const stream = Buffer.concat(['first', '', 'third message', 'x'.repeat(300)].map((text) => frameMessage(Buffer.from(text))));
    const expected = ['first', '', 'third message', 'x'.repeat(300)];
    for (const size of [1, 2, 3, 4, 5, 6, 7, 64, stream.length]) {
      expect(read(pieces(stream, size))).toEqual({ messages: expected, error: undefined, complete: true });
    }
  });

  it('should say when the stream stopped inside a message', () => {
    const framed = frameMessage(Buffer.from('cut short'));
    expect(read([framed.subarray(0, 3)]).complete).toBe(false);
    expect(read([framed.subarray(0, framed.length - 1)]).complete).toBe(false);
  });

  it('should refuse a message over the limit from its prefix, before the message arrives', () => {
    const prefix = Buffer.from([0, 0, 0, 4, 1]);
    expect(read([prefix], 1024).error).toEqual({ code: status.RESOURCE_EXHAUSTED, details: 'Received message larger than max (1025 vs. 1024)' });
    expect(read([frameMessage(Buffer.alloc(1024))], 1024)).toMatchObject({ messages: ['\0'.repeat(1024)], error: undefined });
    // A prefix split over chunks is judged once it is whole.
    expect(read([prefix.subarray(0, 2), prefix.subarray(2)], 1024).error?.code).toBe(status.RESOURCE_EXHAUSTED);
  });

  it('should refuse a message whose compressed flag is set (identity only)', () => {
    const compressed = frameMessage(Buffer.from('zz'));
    compressed[0] = 1;
    expect(read([compressed]).error?.code).toBe(status.INTERNAL);
    expect(read([frameMessage(Buffer.from('ok')), compressed])).toMatchObject({ messages: ['ok'], error: { code: status.INTERNAL } });
  });
});

describe('grpc-timeout', () => {
  it.each([
    ['1H', 3_600_000],
    ['2M', 120_000],
    ['3S', 3000],
    ['250m', 250],
    ['1500u', 1.5],
    ['99999999n', 99.999999],
    ['0m', 0],
  ])('should read %s as %d ms', (header, ms) => {
    expect(parseGrpcTimeout(header)).toBeCloseTo(ms, 9);
  });

  it('should tell an absent header (no deadline) from a malformed one', () => {
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
    for (const header of ['', 'abc', '10', '123456789S', '-1S', '1.5S', '10s', '10 S']) expect(parseGrpcTimeout(header)).toBeNaN();
    expect(parseGrpcTimeout(['1S', '2S'])).toBeNaN();
  });
});

describe('grpc-message', () => {
  it('should percent-encode what grpc-js clients decode back exactly', () => {
    for (const details of ['plain ASCII, with 50% and a # sign', 'clé é ✓ 😀', 'line\nbreak', '']) {
      expect(decodeURI(encodeGrpcMessage(details))).toBe(details);
      expect(encodeGrpcMessage(details)).toMatch(/^[\x21-\x7e]*$/);
    }
  });

  it('should replace a lone surrogate instead of throwing', () => {
    expect(decodeURI(encodeGrpcMessage('a\ud800b'))).toBe('a\ufffdb');
  });
});
