import { constants as h2 } from 'node:http2';
import { afterEach, describe, expect, it } from '@jest/globals';
import { dataFrame, FLAG, FRAME, goaway, grpcFrame, grpcRequestFields, headersFrame, pingFrame, rawHttp2, type Frame } from '../../../test/support/raw-http2.js';
import { eventually } from '../../../test/support/eventually.js';
import type { GrpcServerLimits } from '../src/index.js';
import { ECHO, sleep, startTextService, type TextService } from './text-service.js';

// The connection policy, as grpc-go's server has it: handshake and idle timeouts, maximum age with
// grace, a connection limit, keepalive enforcement and the server's own pings, and the two-step
// GOAWAY.

const isGoaway = (frame: Frame): boolean => frame.type === FRAME.GOAWAY;
const isPing = (frame: Frame): boolean => frame.type === FRAME.PING && (frame.flags & FLAG.ACK) === 0;

describe('GrpcServer: connection policy', () => {
  let service: TextService | undefined;
  const start = async (limits: Partial<GrpcServerLimits>): Promise<TextService> => (service = await startTextService(limits));

  afterEach(async () => {
    await service?.close();
    service = undefined;
  });

  it('should close a connection that sends no HTTP/2 preface within the handshake timeout, and keep one that did', async () => {
    const { port, limits } = await start({ handshakeTimeoutMs: 1000 });
    const silent = await rawHttp2(port, { preface: false, ackSettings: false });
    const client = await rawHttp2(port);
    try {
      expect(await silent.waitClosed(5000)).toBe(true);
      expect(limits).toContain('handshake_timeout');
      expect(client.closed).toBe(false);
    } finally {
      silent.destroy();
      client.destroy();
    }
  });

  it('should close connections past the connection limit as they arrive', async () => {
    const { port, limits } = await start({ maxConnections: 3 });
    const connections = await Promise.all([0, 1, 2].map(() => rawHttp2(port)));
    const fourth = await rawHttp2(port);
    try {
      expect(await fourth.waitClosed(5000)).toBe(true);
      expect(limits).toContain('max_connections');
      expect(connections.map((connection) => connection.closed)).toEqual([false, false, false]);
    } finally {
      [...connections, fourth].forEach((connection) => connection.destroy());
    }
  });

  it('should close a connection idle past the idle timeout with the two-step GOAWAY: max_idle refusing nothing, a PING, then the last stream taken', async () => {
    const { port, limits } = await start({ connectionIdleTimeoutMs: 1000 });
    const connection = await rawHttp2(port);
    try {
      await connection.send(headersFrame(1, grpcRequestFields(ECHO, 'x')), dataFrame(1, grpcFrame(Buffer.from('one call')), true));
      expect(await connection.waitClosed(6000)).toBe(true);
      const goaways = connection.frames.filter(isGoaway).map(goaway);
      expect(goaways[0]).toEqual({ lastStreamId: 2 ** 31 - 1, code: h2.NGHTTP2_NO_ERROR, debugData: 'max_idle' });
      expect(goaways.at(-1)).toMatchObject({ lastStreamId: 1, code: h2.NGHTTP2_NO_ERROR });
      expect(connection.frames.some(isPing)).toBe(true);
      expect(limits).toContain('connection_idle');
    } finally {
      connection.destroy();
    }
  });

  it('should retire a connection past its maximum age (GOAWAY max_age) and cut it after the grace, with a call still in flight', async () => {
    const { port, limits } = await start({ maxConnectionAgeMs: 1000, maxConnectionAgeGraceMs: 1000, maxCallDurationMs: 60_000 });
    const connection = await rawHttp2(port);
    try {
      await connection.send(headersFrame(1, grpcRequestFields(ECHO, 'x')), dataFrame(1, grpcFrame(Buffer.from('hang')), true));
      expect(await connection.waitFor((frame) => isGoaway(frame) && goaway(frame).debugData === 'max_age', 5000)).toBeDefined();
      expect(connection.closed).toBe(false);
      expect(await connection.waitClosed(5000)).toBe(true);
      expect(limits).toEqual(expect.arrayContaining(['max_connection_age']));
      expect(service!.handled.at(-1)).toMatchObject({ request: 'hang', aborted: 'AbortError' });
    } finally {
      connection.destroy();
    }
  });

  it("should end a connection whose client pings too often with GOAWAY ENHANCE_YOUR_CALM 'too_many_pings', as grpc-go does", async () => {
    const { port, limits } = await start({});
    const flood = await rawHttp2(port);
    try {
      for (let i = 0; i < 1000 && !flood.closed; i++) await flood.send(pingFrame(Buffer.alloc(8, i % 256)));
      const calm = await flood.waitFor(isGoaway, 5000);
      expect(goaway(calm!)).toMatchObject({ code: h2.NGHTTP2_ENHANCE_YOUR_CALM, debugData: 'too_many_pings' });
      expect(await flood.waitClosed(5000)).toBe(true);
      expect(limits).toContain('too_many_pings');
      // Three pings were allowed: the first, and two strikes.
      expect(flood.frames.filter((frame) => frame.type === FRAME.PING && (frame.flags & FLAG.ACK) !== 0).length).toBeLessThanOrEqual(3);
    } finally {
      flood.destroy();
    }
  });

  it('should count no strike for a ping after the server sent data (a BDP ping), however often', async () => {
    const { port } = await start({});
    const connection = await rawHttp2(port);
    try {
      for (let id = 1; id <= 19; id += 2) {
        await connection.send(headersFrame(id, grpcRequestFields(ECHO, 'x')), dataFrame(id, grpcFrame(Buffer.from('data')), true));
        await connection.waitFor((frame) => frame.streamId === id && frame.type === FRAME.DATA);
        await connection.send(pingFrame());
      }
      await sleep(200);
      expect(connection.frames.filter(isGoaway)).toEqual([]);
      expect(connection.closed).toBe(false);
    } finally {
      connection.destroy();
    }
  });

  it('should ping a quiet connection and close it when the ping goes unanswered (half-open), keeping one that answers', async () => {
    const { port, limits } = await start({ keepaliveTimeMs: 1000, keepaliveTimeoutMs: 1000, connectionIdleTimeoutMs: 0 });
    const gone = await rawHttp2(port, { ackPings: false });
    const alive = await rawHttp2(port);
    try {
      expect(await gone.waitClosed(8000)).toBe(true);
      expect(gone.frames.some(isPing)).toBe(true);
      expect(limits).toContain('keepalive_timeout');
      expect(alive.frames.some(isPing)).toBe(true);
      expect(alive.closed).toBe(false);
    } finally {
      gone.destroy();
      alive.destroy();
    }
  });

  it('should finish closing once the grace has passed when a client stopped reading (its end of the connection never closes)', async () => {
    const running = await start({});
    // A frozen client (SIGSTOPped, its machine gone): it never reads the server's GOAWAY or FIN, so never closes its side.
    const frozen = await rawHttp2(running.port, { read: false });
    try {
      await sleep(300); // the server took the preface: a session
      const closing = running.server.close(1000);
      service = undefined;
      expect(await Promise.race([closing.then(() => 'closed'), sleep(4000).then(() => 'still closing')])).toBe('closed');
    } finally {
      frozen.destroy();
    }
  });

  it('should close gracefully on shutdown: GOAWAY refusing nothing and a PING, then GOAWAY with the last stream, the call in flight answered', async () => {
    const running = await start({});
    const connection = await rawHttp2(running.port);
    try {
      await connection.send(headersFrame(1, grpcRequestFields(ECHO, 'x')), dataFrame(1, grpcFrame(Buffer.from('before')), true));
      await connection.waitFor((frame) => frame.streamId === 1 && frame.type === FRAME.HEADERS && (frame.flags & FLAG.END_STREAM) !== 0);
      await connection.send(headersFrame(3, grpcRequestFields(ECHO, 'x')), dataFrame(3, grpcFrame(Buffer.from('slow:500')), true));
      await eventually(() => running.handled.some((record) => record.request === 'slow:500'), 5000, 'the slow call runs');
      const closing = running.server.close(5000);
      service = undefined;
      await closing;
      const relevant = connection.frames.filter((frame) => isPing(frame) || isGoaway(frame) || frame.streamId === 3);
      const after = relevant.map((frame) => (isGoaway(frame) ? goaway(frame) : frame.type));
      expect(after).toEqual([
        FRAME.PING,
        { lastStreamId: 2 ** 31 - 1, code: h2.NGHTTP2_NO_ERROR, debugData: 'shutdown' },
        expect.objectContaining({ lastStreamId: 3, code: h2.NGHTTP2_NO_ERROR }),
        FRAME.HEADERS,
        FRAME.DATA,
        FRAME.HEADERS,
        ...(after.length > 6 ? after.slice(6) : []),
      ]);
      await eventually(() => connection.closed, 5000, 'the connection closed');
    } finally {
      connection.destroy();
    }
  });
});
