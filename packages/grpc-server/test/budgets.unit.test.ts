import { constants as h2, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status, type Client } from '@grpc/grpc-js';
import { dataFrame, FLAG, FRAME, grpcFrame, grpcRequestFields, headersFrame, rawHttp2, rstCode, windowUpdateFrame } from '../../../test/support/raw-http2.js';
import { eventually } from '../../../test/support/eventually.js';
import { CONNECTION_RESERVE_BYTES } from '../src/index.js';
import { echo, ECHO, grpcClient, h2Session, message, outcomeOf, REPEAT, requestHeaders, sleep, statusOf, startTextService, type StreamOutcome, type TextService } from './text-service.js';

// Memory bounded by construction: what calls hold (headers, messages, unsent answers) stays within
// a connection's and the process' budgets, and time limits free what clients leave behind.

const KiB = 1024;
const LIMITS = {
  maxReceiveMessageBytes: 256 * KiB,
  maxSendMessageBytes: 256 * KiB,
  connectionBufferBytes: 1024 * KiB,
  processBufferBytes: 2048 * KiB,
  streamWindowBytes: 256 * KiB,
  streamIdleTimeoutMs: 1000,
  writeTimeoutMs: 1000,
  maxCallDurationMs: 1500,
};

/** An Echo call on stream 1 whose framed message is sent one byte per DATA frame, the last one ending the stream. */
function byteByByte(authority: string, framed: Buffer): Buffer[] {
  const frames = [headersFrame(1, grpcRequestFields(ECHO, authority))];
  for (let i = 0; i < framed.length; i++) frames.push(dataFrame(1, framed.subarray(i, i + 1), i === framed.length - 1));
  return frames;
}

describe('GrpcServer: budgets and time limits', () => {
  let service: TextService;
  let client: Client;

  beforeAll(async () => {
    service = await startTextService(LIMITS);
    client = grpcClient(service.address);
  });

  afterAll(async () => {
    client.close();
    await service.close();
  });

  /** `count` Echo calls on `session` that announce a message of `bytes` and send only its first KiB, never ending. */
  function holdPartialMessages(session: ClientHttp2Session, count: number, bytes: number): Array<Promise<StreamOutcome>> {
    return Array.from({ length: count }, () => {
      const stream = session.request(requestHeaders(ECHO));
      const outcome = outcomeOf(stream);
      const prefix = Buffer.alloc(5);
      prefix.writeUInt32BE(bytes, 1);
      stream.write(Buffer.concat([prefix, Buffer.alloc(KiB)]));
      return outcome;
    });
  }

  it("should refuse messages past a connection's budget RESOURCE_EXHAUSTED, hold no more than it, and serve other connections meanwhile", async () => {
    const attacker = await h2Session(service.address);
    try {
      const held = holdPartialMessages(attacker, 10, 190 * KiB);
      // Five 190 KiB messages fit in the 1 MiB budget beside the ten streams' headers (about 4 KiB
      // each); the other five are refused from their prefix.
      const refused = await Promise.all(held.slice(5));
      for (const outcome of refused) expect(statusOf(outcome)).toBe(String(status.RESOURCE_EXHAUSTED));
      expect(service.server.bufferedBytes).toBeGreaterThanOrEqual(5 * 190 * KiB);
      expect(service.server.bufferedBytes).toBeLessThanOrEqual(LIMITS.connectionBufferBytes);
      expect(await echo(client, 'served meanwhile')).toBe('served meanwhile');
      // Once the client gives them up, the bytes are free.
      attacker.destroy();
      await eventually(() => service.server.bufferedBytes === 0, 5000, 'every byte released');
    } finally {
      attacker.destroy();
    }
  });

  it("should stop at the process' budget across connections, while a connection within its reserve is still served", async () => {
    const attackers = await Promise.all([0, 1, 2, 3].map(() => h2Session(service.address)));
    try {
      const held = attackers.flatMap((session) => holdPartialMessages(session, 5, 200 * KiB));
      // The process' 2 MiB take ten of the twenty 200 KiB messages.
      await eventually(() => service.limits.filter((limit) => limit === 'message_budget').length >= 10, 5000, 'ten messages refused');
      expect(service.server.bufferedBytes).toBeLessThanOrEqual(LIMITS.processBufferBytes + 4 * CONNECTION_RESERVE_BYTES);
      expect(await echo(client, 'within its reserve')).toBe('within its reserve');
      attackers.forEach((session) => session.destroy());
      await Promise.all(held);
      await eventually(() => service.server.bufferedBytes === 0, 5000, 'every byte released');
    } finally {
      attackers.forEach((session) => session.destroy());
    }
  });

  it('should refuse new streams with REFUSED_STREAM once a connection holds its budget, and take them again once it does not', async () => {
    const session = await h2Session(service.address);
    try {
      const held = holdPartialMessages(session, 4, 200 * KiB);
      await eventually(() => service.server.bufferedBytes >= 4 * 200 * KiB, 5000, 'four messages held');
      // A fifth message that leaves the connection less than a stream's headers and overhead (4 KiB).
      held.push(...holdPartialMessages(session, 1, LIMITS.connectionBufferBytes - service.server.bufferedBytes - 6 * KiB));
      await eventually(() => service.server.bufferedBytes > LIMITS.connectionBufferBytes - 4 * KiB, 5000, 'the budget nearly spent');
      const outcome = await new Promise<StreamOutcome>((resolve) => {
        const stream = session.request(requestHeaders(ECHO));
        void outcomeOf(stream).then(resolve);
        stream.end(message('refused'));
      });
      expect(outcome.rstCode).toBe(h2.NGHTTP2_REFUSED_STREAM);
      expect(outcome.headers).toBeUndefined();
      expect(service.limits).toContain('stream_budget');
      await Promise.all(held); // ended by the stream idle timeout
      const stream = session.request(requestHeaders(ECHO));
      const served = outcomeOf(stream);
      stream.end(message('taken again'));
      expect(statusOf(await served)).toBe('0');
    } finally {
      session.destroy();
    }
  });

  it('should end a call whose request stops arriving after the stream idle timeout, DEADLINE_EXCEEDED, and release what it held', async () => {
    const session = await h2Session(service.address);
    try {
      const [held] = holdPartialMessages(session, 1, 100 * KiB);
      const started = performance.now();
      const outcome = await held!;
      expect(performance.now() - started).toBeGreaterThanOrEqual(LIMITS.streamIdleTimeoutMs - 50);
      expect(statusOf(outcome)).toBe(String(status.DEADLINE_EXCEEDED));
      expect(outcome.rstCode).toBe(h2.NGHTTP2_NO_ERROR);
      await eventually(() => service.server.bufferedBytes === 0, 5000, 'every byte released');
    } finally {
      session.destroy();
    }
  });

  it("should end a unary call without a deadline after the server's maximum duration, DEADLINE_EXCEEDED, its handler's signal aborted", async () => {
    await expect(echo(client, 'hang')).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED, details: "The call exceeded the server's maximum duration" });
    expect(service.handled.at(-1)).toMatchObject({ request: 'hang', aborted: 'TimeoutError' });
  });

  it('should assemble a message sent in one-byte DATA frames and answer it, within the allowance of small frames', async () => {
    const connection = await rawHttp2(service.port);
    try {
      const framed = grpcFrame(Buffer.alloc(900, 'a'));
      await connection.send(...byteByByte(service.address, framed));
      await connection.waitFor((frame) => frame.streamId === 1 && frame.type === FRAME.HEADERS && (frame.flags & FLAG.END_STREAM) !== 0, 10_000);
      const answered = connection.frames.filter((frame) => frame.streamId === 1 && frame.type === FRAME.DATA).reduce((total, frame) => total + frame.payload.length, 0);
      expect(answered).toBe(framed.length);
    } finally {
      connection.destroy();
    }
  });

  it('should take message after message whose frames flow control cut short (3 KiB, then 100 bytes, again and again), past the allowance of small frames', async () => {
    const connection = await rawHttp2(service.port);
    try {
      // Room for the 60 echoes on the connection (each fits its stream's default window).
      await connection.send(windowUpdateFrame(0, 16 * 1024 * KiB));
      // 60 messages of 60 KiB, 19 small frames each: 1,140 in all, more than the allowance's burst (1,000).
      for (let id = 1; id <= 119; id += 2) {
        const framed = grpcFrame(Buffer.alloc(60 * KiB, 'a'));
        const frames = [headersFrame(id, grpcRequestFields(ECHO, service.address))];
        for (let at = 0; at < framed.length; ) {
          const size = frames.length % 2 === 1 ? 3 * KiB : 100;
          frames.push(dataFrame(id, framed.subarray(at, at + size), at + size >= framed.length));
          at += size;
        }
        await connection.send(...frames);
        const ended = await connection.waitFor((frame) => frame.streamId === id && frame.type === FRAME.HEADERS && (frame.flags & FLAG.END_STREAM) !== 0, 5000);
        expect({ id, ended: ended !== undefined, closed: connection.closed }).toEqual({ id, ended: true, closed: false });
      }
      expect(service.limits).not.toContain('too_many_small_frames');
    } finally {
      connection.destroy();
    }
  });

  it("should close a connection that keeps sending messages a byte a frame (GOAWAY ENHANCE_YOUR_CALM 'too_many_small_frames')", async () => {
    const connection = await rawHttp2(service.port);
    try {
      const framed = grpcFrame(Buffer.alloc(20_000, 'a'));
      await connection.send(...byteByByte(service.address, framed));
      expect(await connection.waitClosed(10_000)).toBe(true);
      expect(service.limits).toContain('too_many_small_frames');
      expect(connection.frames.some((frame) => frame.streamId === 1 && frame.type === FRAME.DATA)).toBe(false);
    } finally {
      connection.destroy();
    }
  });

  it('should refuse an answer larger than the largest answer RESOURCE_EXHAUSTED, before sending any of it', async () => {
    await expect(echo(client, `big:${256 * KiB + 1}`)).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(await echo(client, `big:${256 * KiB}`)).toHaveLength(256 * KiB);
  });

  it('should reset the streams of answers nobody reads after the write timeout, refusing calls past the budget meanwhile, and release them', async () => {
    // A client that never grants flow-control window: 64 KiB of answers leave, the rest wait in the server.
    const connection = await rawHttp2(service.port);
    try {
      const frames = [];
      for (let id = 1; id <= 19; id += 2) frames.push(headersFrame(id, grpcRequestFields(ECHO, service.address)), dataFrame(id, grpcFrame(Buffer.from(`big:${200 * KiB}`)), true));
      await connection.send(...frames);
      // Five 200 KiB answers fill the 1 MiB: the calls after them are refused, as new streams or as answers.
      await eventually(() => service.limits.includes('answer_budget') || service.limits.includes('stream_budget'), 5000, 'calls refused past the budget');
      expect(service.server.bufferedBytes).toBeLessThanOrEqual(LIMITS.connectionBufferBytes + 2 * 200 * KiB);
      const reset = await connection.waitFor((frame) => frame.type === FRAME.RST_STREAM && rstCode(frame) === h2.NGHTTP2_CANCEL, 5000);
      expect(reset).toBeDefined();
      expect(service.limits).toContain('write_timeout');
      await eventually(() => service.server.bufferedBytes === 0, 5000, 'every byte released');
    } finally {
      connection.destroy();
    }
  });

  it('should end a server stream whose unread answers exceed the budget RESOURCE_EXHAUSTED instead of holding them', async () => {
    const connection = await rawHttp2(service.port);
    try {
      await connection.send(headersFrame(1, grpcRequestFields(REPEAT, service.address)), dataFrame(1, grpcFrame(Buffer.from(`100:${100 * KiB}`)), true));
      await eventually(() => service.limits.filter((limit) => limit === 'answer_budget').length > 0, 5000, 'the stream refused past its budget');
      expect(service.server.bufferedBytes).toBeLessThanOrEqual(LIMITS.connectionBufferBytes);
      await sleep(10);
    } finally {
      connection.destroy();
    }
    await eventually(() => service.server.bufferedBytes === 0, 5000, 'every byte released');
  });
});
