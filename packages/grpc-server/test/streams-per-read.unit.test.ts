import { constants as h2 } from 'node:http2';
import { afterEach, describe, expect, it } from '@jest/globals';
import { dataFrame, FRAME, goaway, grpcFrame, grpcRequestFields, headersFrame, rawHttp2, rstStreamFrame } from '../../../test/support/raw-http2.js';
import { echo, ECHO, grpcClient, startTextService, type TextService } from './text-service.js';

// What one socket read may cost: Node hands JavaScript every stream of what a read brought before
// anything else runs, so a connection that opens more streams in one turn of the event loop than
// a client waiting for its answers can (three times maxConcurrentStreams) is ended there, before
// the reset allowances (1000 at once) would.

describe('GrpcServer: streams opened in one read', () => {
  let service: TextService | undefined;

  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  /** `count` Echo calls with their whole request and END_STREAM, each then reset (the client cancels after sending), as one write. */
  function endedThenReset(count: number, firstId = 1): Buffer[] {
    const frames: Buffer[] = [];
    for (let i = 0, id = firstId; i < count; i++, id += 2) {
      frames.push(headersFrame(id, grpcRequestFields(ECHO, 'text')), dataFrame(id, grpcFrame(Buffer.from(`burst-${i}`)), true), rstStreamFrame(id, h2.NGHTTP2_CANCEL));
    }
    return frames;
  }

  it("should end a connection whose one read opens more than three times maxConcurrentStreams, with GOAWAY ENHANCE_YOUR_CALM 'too_many_streams_per_read', before it runs their handlers", async () => {
    service = await startTextService({ maxConcurrentStreams: 10 });
    const connection = await rawHttp2(service.port);
    try {
      await connection.send(...endedThenReset(200));
      const received = await connection.waitFor((frame) => frame.type === FRAME.GOAWAY, 5000);
      expect(received === undefined ? undefined : goaway(received)).toMatchObject({ code: h2.NGHTTP2_ENHANCE_YOUR_CALM, debugData: 'too_many_streams_per_read' });
      expect(await connection.waitClosed(5000)).toBe(true);
    } finally {
      connection.destroy();
    }
    // Streams past the 30th of the read never reach a handler (an earlier, smaller read may have run some).
    expect(service.handled.filter((record) => record.request.startsWith('burst-')).length).toBeLessThanOrEqual(30);
    expect(service.limits).toContain('too_many_streams_per_read');
    const client = grpcClient(service.address);
    try {
      expect(await echo(client, 'still served')).toBe('still served');
    } finally {
      client.close();
    }
  });

  it('should drop the rest of a read of 10,000 HEADERS and RST_STREAM pairs once the connection ended: at most a few hundred handlers run', async () => {
    service = await startTextService();
    const connection = await rawHttp2(service.port);
    try {
      await connection.send(...endedThenReset(10_000));
      const received = await connection.waitFor((frame) => frame.type === FRAME.GOAWAY, 10_000);
      expect(received === undefined ? undefined : goaway(received).code).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
      expect(await connection.waitClosed(5000)).toBe(true);
    } finally {
      connection.destroy();
    }
    // However the reads split the write, the first that brings more than 300 streams ends it.
    expect(service.handled.filter((record) => record.request.startsWith('burst-')).length).toBeLessThan(1000);
  });

  it('should keep serving a connection that opens and cancels up to three times maxConcurrentStreams in one read', async () => {
    service = await startTextService({ maxConcurrentStreams: 100 });
    const connection = await rawHttp2(service.port);
    try {
      await connection.send(...endedThenReset(250));
      // A call after them on the same connection: everything before it was read.
      await connection.send(headersFrame(501, grpcRequestFields(ECHO, 'text')), dataFrame(501, grpcFrame(Buffer.from('after the burst')), true));
      expect(await connection.waitFor((frame) => frame.streamId === 501 && frame.type === FRAME.DATA, 5000)).toBeDefined();
      expect(connection.frames.filter((frame) => frame.type === FRAME.GOAWAY)).toEqual([]);
    } finally {
      connection.destroy();
    }
    expect(service.limits).not.toContain('too_many_streams_per_read');
  });
});
