import { constants as h2 } from 'node:http2';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { status, type Client } from '@grpc/grpc-js';
import { dataFrame, FRAME, goaway, grpcFrame, grpcRequestFields, headersFrame, rawHttp2, rstCode, rstStreamFrame, type RawHttp2Connection } from '../../../test/support/raw-http2.js';
import { eventually } from '../../../test/support/eventually.js';
import { CHAT, echo, ECHO, grpcClient, h2Session, outcomeOf, requestHeaders, statusOf, startTextService, type TextService } from './text-service.js';

// Cancellation as PROTOCOL-HTTP2 has it: a client's RST_STREAM cancels, before END_STREAM the call
// never starts; the server's RST_STREAM follows early trailers (NO_ERROR) and the deadline (CANCEL).

const RST_CODES = Array.from({ length: 14 }, (_, code) => code); // NO_ERROR (0) … HTTP_1_1_REQUIRED (13)

describe('GrpcServer: cancellation', () => {
  let service: TextService;
  let client: Client;

  beforeAll(async () => {
    service = await startTextService();
    client = grpcClient(service.address);
  });

  afterAll(async () => {
    client.close();
    await service.close();
  });

  /** Opens raw streams on `connection` from `firstId`: HEADERS and a whole Echo message, `ended` with END_STREAM or not, then RST_STREAM with each code. */
  async function resetEach(connection: RawHttp2Connection, firstId: number, request: string, ended: boolean): Promise<number> {
    let id = firstId;
    for (const code of RST_CODES) {
      await connection.send(headersFrame(id, grpcRequestFields(ECHO, service.address)), dataFrame(id, grpcFrame(Buffer.from(request)), ended), rstStreamFrame(id, code));
      id += 2;
    }
    return id;
  }

  it('should end a connection that opens and cancels 1,100 calls at once (the rapid reset, CVE-2023-44487) with GOAWAY, and keep serving others', async () => {
    const connection = await rawHttp2(service.port);
    try {
      const frames: Buffer[] = [];
      for (let id = 1; id <= 2 * 1100; id += 2) frames.push(headersFrame(id, grpcRequestFields(ECHO, service.address)), rstStreamFrame(id, h2.NGHTTP2_CANCEL));
      await connection.send(...frames);
      const received = await connection.waitFor((frame) => frame.type === FRAME.GOAWAY, 5000);
      // A burst read at once meets nghttp2's own allowance (the same 1000, then 33/s) before the
      // server sees the calls close: its GOAWAY is INTERNAL_ERROR; read in several chunks (a busy
      // machine), the flood meets the server's first (ENHANCE_YOUR_CALM 'too_many_resets'). Either
      // ends the connection, which is what the attacker must see.
      expect([h2.NGHTTP2_INTERNAL_ERROR, h2.NGHTTP2_ENHANCE_YOUR_CALM]).toContain(received === undefined ? undefined : goaway(received).code);
      expect(await connection.waitClosed(5000)).toBe(true);
    } finally {
      connection.destroy();
    }
    expect(await echo(client, 'still served')).toBe('still served');
  });

  it('should never run the handler of a call reset before its END_STREAM, whatever the RST_STREAM code', async () => {
    const connection = await rawHttp2(service.port);
    try {
      let id = 1;
      for (let round = 0; round < 20; round++) id = await resetEach(connection, id, `reset-before-end-${round}`, false);
      // The same connection still serves a call, so everything before it was read.
      await connection.send(headersFrame(id, grpcRequestFields(ECHO, service.address)), dataFrame(id, grpcFrame(Buffer.from('after')), true));
      expect(await connection.waitFor((frame) => frame.streamId === id && frame.type === FRAME.DATA)).toBeDefined();
      expect(service.handled.filter((record) => record.request.startsWith('reset-before-end'))).toEqual([]);
      expect(await echo(client, 'still serving')).toBe('still serving');
    } finally {
      connection.destroy();
    }
  });

  it('should cancel a call reset after its END_STREAM: its handler sees the signal abort, and no answer is sent on the closed stream', async () => {
    const connection = await rawHttp2(service.port);
    try {
      await connection.send(headersFrame(1, grpcRequestFields(ECHO, service.address)), dataFrame(1, grpcFrame(Buffer.from('hang')), true));
      await eventually(() => service.handled.some((record) => record.request === 'hang' && record.aborted === undefined), 5000, 'the handler runs');
      await connection.send(rstStreamFrame(1, h2.NGHTTP2_CANCEL));
      await eventually(() => service.handled.at(-1)?.aborted === 'AbortError', 5000, 'the signal aborts');
      expect(connection.frames.filter((frame) => frame.streamId === 1)).toEqual([]);
    } finally {
      connection.destroy();
    }
  });

  it('should end a call at its 50 ms deadline with RST_STREAM(CANCEL), the handler seeing its signal abort, and grpc-js reporting DEADLINE_EXCEEDED', async () => {
    const session = await h2Session(service.address);
    try {
      const before = service.handled.length;
      const stream = session.request(requestHeaders(ECHO, { 'grpc-timeout': '50m' }));
      const outcome = outcomeOf(stream);
      stream.end(Buffer.concat([Buffer.from([0, 0, 0, 0, 4]), Buffer.from('hang')]));
      const started = performance.now();
      const ended = await outcome;
      expect(performance.now() - started).toBeGreaterThanOrEqual(45);
      expect(ended.rstCode).toBe(h2.NGHTTP2_CANCEL);
      expect(ended.headers).toBeUndefined();
      expect(service.handled[before]).toMatchObject({ request: 'hang', aborted: 'TimeoutError' });
      expect(service.handled[before]!.deadline).toBeGreaterThan(Date.now() - 10_000);
      await expect(echo(client, 'hang', { deadlineMs: 50 })).rejects.toMatchObject({ code: status.DEADLINE_EXCEEDED });
      await eventually(() => service.handled[before + 1]?.aborted !== undefined, 5000, 'the second handler sees its signal abort');
      // grpc-js counts its 50 ms from before the request left and resets the call at its own
      // deadline, so on a loaded machine its RST_STREAM(CANCEL) can reach the server before the
      // server's timer fires (a cold CI run saw it): the handler's signal aborts either way.
      expect(service.handled[before + 1]).toMatchObject({ request: 'hang', aborted: expect.stringMatching(/^(TimeoutError|AbortError)$/) });
    } finally {
      session.destroy();
    }
  });

  it("should never reset a call before its client's deadline has passed: 300 calls of 1 to 5 ms, in grpc-go's units", async () => {
    // grpc-go's client takes an RST_STREAM(CANCEL) that comes before its own deadline as CANCELLED
    // (http2_client.go, handleRSTStream), so a server that ends a call early turns the client's
    // DEADLINE_EXCEEDED into CANCELLED: ghz saw it against the cache (`Canceled: stream terminated
    // by RST_STREAM with error code: CANCEL`). grpc-go's server starts a Go timer when it reads the
    // headers, which never fires early; a Node timer may, by up to 2 ms (it truncates the delay to
    // whole milliseconds and counts from a millisecond clock).
    const calls = await deadlineCalls(service.port, 300);
    expect(calls).toHaveLength(300);
    expect(new Set(calls.map((call) => call.rstCode))).toEqual(new Set([h2.NGHTTP2_CANCEL]));
    expect(calls.filter((call) => call.elapsedMs < call.timeoutMs)).toEqual([]);
  });

  it('should follow early trailers with RST_STREAM(NO_ERROR) while the client still sends', async () => {
    const connection = await rawHttp2(service.port);
    try {
      // Unknown method, request not finished: Trailers-Only, then RST_STREAM(NO_ERROR).
      await connection.send(headersFrame(1, grpcRequestFields('/test.Text/Nope', service.address)));
      const reset = await connection.waitFor((frame) => frame.streamId === 1 && frame.type === FRAME.RST_STREAM);
      const answered = connection.frames.filter((frame) => frame.streamId === 1).map((frame) => frame.type);
      expect(answered).toEqual([FRAME.HEADERS, FRAME.RST_STREAM]);
      expect(rstCode(reset!)).toBe(h2.NGHTTP2_NO_ERROR);
      // A bidirectional call the server ends while the client is still sending: trailers, then RST_STREAM(NO_ERROR).
      await connection.send(headersFrame(3, grpcRequestFields(CHAT, service.address)), dataFrame(3, Buffer.from([1, 0, 0, 0, 1, 0])));
      const resetChat = await connection.waitFor((frame) => frame.streamId === 3 && frame.type === FRAME.RST_STREAM);
      expect(rstCode(resetChat!)).toBe(h2.NGHTTP2_NO_ERROR);
      expect(connection.frames.filter((frame) => frame.streamId === 3).map((frame) => frame.type)).toEqual([FRAME.HEADERS, FRAME.RST_STREAM]);
    } finally {
      connection.destroy();
    }
  });

  it('should end a bidirectional call at its deadline with DEADLINE_EXCEEDED in the trailers after what it sent, then RST_STREAM(CANCEL)', async () => {
    const session = await h2Session(service.address);
    try {
      const stream = session.request(requestHeaders(CHAT, { 'grpc-timeout': '200m' }));
      const outcome = outcomeOf(stream);
      stream.write(Buffer.concat([Buffer.from([0, 0, 0, 0, 2]), Buffer.from('hi')]));
      const ended = await outcome;
      expect(ended.headers?.[':status']).toBe(200);
      expect(ended.body.subarray(5).toString()).toBe('hi');
      expect(statusOf(ended)).toBe(String(status.DEADLINE_EXCEEDED));
      expect(ended.rstCode).toBe(h2.NGHTTP2_CANCEL);
    } finally {
      session.destroy();
    }
  });
});

/** One call of deadlineCalls: its grpc-timeout, how the server ended it, and when, from before it was sent. */
interface DeadlineCall {
  header: string;
  timeoutMs: number;
  rstCode: number;
  elapsedMs: number;
}

/**
 * `count` Echo calls, one after the other, that never answer ('hang'), each with a grpc-timeout of
 * 1 to 5 ms as grpc-go writes it (the time left when it sends, in ns), from a worker thread: a
 * client with an event loop of its own, as one in another process, whose clock is read just before
 * it sends. A reset that reaches it sooner than the timeout was sent before the client's deadline.
 */
async function deadlineCalls(port: number, count: number): Promise<DeadlineCall[]> {
  const worker = new Worker(
    `const http2 = require('node:http2');
     const { parentPort, workerData: { port, count } } = require('node:worker_threads');
     const timeouts = [['999870n', 0.99987], ['1999870n', 1.99987], ['2999870n', 2.99987], ['4999870n', 4.99987], ['2m', 2], ['1500u', 1.5]];
     const hang = Buffer.from([0, 0, 0, 0, 4, 0x68, 0x61, 0x6e, 0x67]);
     const one = (session, [header, timeoutMs]) => new Promise((resolve) => {
       const sent = performance.now();
       const stream = session.request({ ':method': 'POST', ':path': '/test.Text/Echo', 'content-type': 'application/grpc', te: 'trailers', 'grpc-timeout': header });
       stream.on('error', () => undefined);
       stream.on('close', () => resolve({ header, timeoutMs, rstCode: stream.rstCode, elapsedMs: performance.now() - sent }));
       stream.resume();
       stream.end(hang);
     });
     const session = http2.connect('http://127.0.0.1:' + port);
     session.on('error', () => undefined);
     session.once('remoteSettings', async () => {
       const calls = [];
       for (let i = 0; i < count; i++) calls.push(await one(session, timeouts[i % timeouts.length]));
       session.close();
       parentPort.postMessage(calls);
     });`,
    { eval: true, workerData: { port, count } },
  );
  try {
    return await new Promise<DeadlineCall[]>((resolve, reject) => worker.once('message', resolve).once('error', reject));
  } finally {
    await worker.terminate();
  }
}
