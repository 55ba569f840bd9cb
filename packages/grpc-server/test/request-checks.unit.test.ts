import { constants as h2, type ClientHttp2Session } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Metadata, status, type Client } from '@grpc/grpc-js';
import { echo, ECHO, grpcClient, h2Session, message, messageOf, outcomeOf, requestHeaders, statusOf, startTextService, type StreamOutcome, type TextService } from './text-service.js';

// What the server takes as a gRPC call, and what it says when it refuses one: only its own texts.

describe('GrpcServer: request checks', () => {
  let service: TextService;
  let session: ClientHttp2Session;
  let client: Client;

  beforeAll(async () => {
    service = await startTextService();
    session = await h2Session(service.address);
    client = grpcClient(service.address);
  });

  afterAll(async () => {
    session.destroy();
    client.close();
    await service.close();
  });

  const call = (headers: Record<string, string>, body = message('hello')): Promise<StreamOutcome> => {
    const stream = session.request(requestHeaders(ECHO, headers));
    const outcome = outcomeOf(stream);
    stream.end(body);
    return outcome;
  };

  it.each(['GET', 'PUT', 'DELETE'])('should refuse :method %s with HTTP 405, gRPC INTERNAL, and run nothing', async (method) => {
    const outcome = await call({ ':method': method });
    expect(outcome.headers?.[':status']).toBe(405);
    expect(statusOf(outcome)).toBe(String(status.INTERNAL));
    expect(outcome.body.length).toBe(0);
  });

  it.each(['application/grpc', 'application/grpc+proto', 'APPLICATION/GRPC', 'Application/gRPC+Proto'])('should serve content-type %s (media types are case-insensitive)', async (contentType) => {
    const outcome = await call({ 'content-type': contentType });
    expect(statusOf(outcome)).toBe('0');
    expect(outcome.body.subarray(5).toString()).toBe('hello');
  });

  it.each(['application/grpc-web+proto', 'application/grpc-web', 'application/grpc+json', 'application/grpcx', 'application/grpc; charset=utf-8', 'text/plain'])(
    'should refuse content-type %s with HTTP 415 and no gRPC status',
    async (contentType) => {
      const before = service.handled.length;
      const outcome = await call({ 'content-type': contentType });
      expect(outcome.headers?.[':status']).toBe(415);
      expect(statusOf(outcome)).toBeUndefined();
      expect(service.handled.length).toBe(before);
    },
  );

  it('should name an unknown method that is a method name, and nothing else a client puts in :path', async () => {
    const named = await call({ ':path': '/test.Text/Nope' });
    expect(statusOf(named)).toBe(String(status.UNIMPLEMENTED));
    expect(decodeURIComponent(messageOf(named) as string)).toBe('The server does not implement the method /test.Text/Nope');
    for (const path of ['/<script>alert(1)</script>/x', `/a/${'b'.repeat(5000)}`, '/test.Text/Echo?x=1', '/%0d%0aSet-Cookie:%20a']) {
      const refused = await call({ ':path': path });
      expect(statusOf(refused)).toBe(String(status.UNIMPLEMENTED));
      expect(decodeURIComponent(messageOf(refused) as string)).toBe('The server does not implement this method');
    }
  });

  it('should not repeat a malformed grpc-timeout', async () => {
    const outcome = await call({ 'grpc-timeout': '<b>9999999999S</b>' });
    expect(statusOf(outcome)).toBe(String(status.INTERNAL));
    expect(decodeURIComponent(messageOf(outcome) as string)).toBe('Invalid grpc-timeout');
  });

  it("should never send a handler's Error message, only its status", async () => {
    await expect(echo(client, 'fail')).rejects.toMatchObject({ code: status.INTERNAL, details: '' });
    await expect(echo(client, 'throw')).rejects.toMatchObject({ code: status.UNKNOWN, details: 'Unknown error' });
  });

  it('should take metadata up to 16 KiB and reset a call whose headers are larger (RST_STREAM ENHANCE_YOUR_CALM: RESOURCE_EXHAUSTED), keeping the connection', async () => {
    const fits = new Metadata();
    fits.set('x-fits', 'v'.repeat(15 * 1024));
    expect(await echo(client, 'within', { metadata: fits })).toBe('within');
    for (const [name, value] of [
      ['x-big', 'v'.repeat(17 * 1024)],
      ['x-big-bin', Buffer.alloc(17 * 1024, 1).toString('base64')],
    ] as const) {
      const before = service.handled.length;
      const outcome = await call({ [name]: value });
      expect(outcome.headers).toBeUndefined();
      expect(outcome.rstCode).toBe(h2.NGHTTP2_ENHANCE_YOUR_CALM);
      expect(service.handled.length).toBe(before);
    }
    const tooMuch = new Metadata();
    tooMuch.set('x-big', 'v'.repeat(64 * 1024));
    await expect(echo(client, 'too much', { metadata: tooMuch })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
    expect(statusOf(await call({}))).toBe('0');
  });
});
