import { get } from 'node:http';
import { connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, credentials, Metadata, status, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { cacheServiceDefinition, type Invalidation__Output } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';
import { callWithBytes, healthCheck, healthClient, rawCall, rawClient, requestWithKeyBytes, startCache, type RunningCache } from './cache-fixture.js';
import { subscribe } from './subscription.js';
import { CACHE_SERVICE_NAME } from '../src/server.js';

// What a client sees of the gRPC server at the wire, pinned against @grpc/grpc-js 1.14's Server so
// that another server implementation can be held to it. Where grpc-js does something the gRPC
// protocol (PROTOCOL-HTTP2.md) leaves open or gets differently from other implementations, the
// test asserts the protocol-level fact and a comment records what grpc-js does.

const GET = cacheServiceDefinition().Get.path;
const SUBSCRIBE = cacheServiceDefinition().Subscribe.path;

/** A gRPC message frame: compressed flag, 4-byte big-endian length, the message. */
function frame(message: Buffer, compressed = 0): Buffer {
  const prefix = Buffer.alloc(5);
  prefix.writeUInt8(compressed, 0);
  prefix.writeUInt32BE(message.length, 1);
  return Buffer.concat([prefix, message]);
}

/** A SubscribeRequest (repeated string prefixes = 1). */
const subscribeRequest = (...prefixes: string[]): Buffer => {
  const writer = protobuf.Writer.create();
  for (const prefix of prefixes) writer.uint32((1 << 3) | 2).string(prefix);
  return Buffer.from(writer.finish());
};

const getRequest = (key: string): Buffer => requestWithKeyBytes(Buffer.from(key));

/** The request headers of a gRPC call as a raw HTTP/2 client sends them. */
const grpcHeaders = (path: string, extra: OutgoingHttpHeaders = {}): OutgoingHttpHeaders => ({
  [h2.HTTP2_HEADER_METHOD]: 'POST',
  [h2.HTTP2_HEADER_PATH]: path,
  [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
  te: 'trailers',
  ...extra,
});

/** What a raw HTTP/2 client saw of one stream: response headers, trailers if any, body, and the RST_STREAM code it closed with. */
interface Answer {
  headers: IncomingHttpHeaders;
  trailers?: IncomingHttpHeaders;
  body: Buffer;
  rstCode: number | undefined;
}

/** grpc-status as a client reads it: from the trailers, or from the headers of a trailers-only answer. */
const grpcStatus = (answer: Answer): unknown => (answer.trailers ?? answer.headers)['grpc-status'];
const grpcMessage = (answer: Answer): unknown => (answer.trailers ?? answer.headers)['grpc-message'];

/** Everything the server answers on `stream` until it closes; once the server ended its side, ours ends too. */
function answerOf(stream: ClientHttp2Stream): Promise<Answer> {
  return new Promise((resolve, reject) => {
    let headers: IncomingHttpHeaders | undefined;
    let trailers: IncomingHttpHeaders | undefined;
    const chunks: Buffer[] = [];
    stream.on('response', (received) => (headers = received));
    stream.on('trailers', (received: IncomingHttpHeaders) => (trailers = received));
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.on('end', () => {
      if (!stream.writableEnded) stream.end();
    });
    stream.on('error', reject);
    stream.on('close', () => {
      if (headers === undefined) reject(new Error(`stream closed without a response (RST_STREAM ${String(stream.rstCode)})`));
      else resolve({ headers, trailers, body: Buffer.concat(chunks), rstCode: stream.rstCode });
    });
  });
}

function exchange(session: ClientHttp2Session, headers: OutgoingHttpHeaders, body: Buffer): Promise<Answer> {
  const stream = session.request(headers);
  const answer = answerOf(stream);
  stream.end(body);
  return answer;
}

/** A Get on `session` answered OK: the connection still serves calls. */
async function expectServing(session: ClientHttp2Session): Promise<void> {
  const answer = await exchange(session, grpcHeaders(GET), frame(getRequest('transport:alive')));
  expect(answer.headers[':status']).toBe(200);
  expect(grpcStatus(answer)).toBe('0');
}

/** One unary call of any path with raw request and response bytes, and optional metadata. */
function unary(client: Client, path: string, request: Buffer, metadata = new Metadata()): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(path, (bytes: Buffer) => bytes, (bytes: Buffer) => bytes, request, metadata, (err: ServiceError | null, response?: Buffer) => (err ? reject(err) : resolve(response!))),
  );
}

/** The cache_subscriptions gauge as a scrape reads it: Subscribe streams open on this replica. */
async function openSubscriptions(cache: RunningCache): Promise<number> {
  const scraped = await cache.registry.getSingleMetricAsString('cache_subscriptions');
  const value = /^cache_subscriptions(?:\{[^}]*\})? (\d+)$/m.exec(scraped)?.[1];
  if (value === undefined) throw new Error(`no cache_subscriptions sample in ${scraped}`);
  return Number(value);
}

const subscriptionsBecome = (cache: RunningCache, expected: number): Promise<boolean> =>
  eventually(async () => (await openSubscriptions(cache)) === expected, 5000, `cache_subscriptions = ${expected}`);

/** Settles once the stream delivered its first message, or fails with the status it ended with. */
const firstMessage = (stream: NodeJS.EventEmitter): Promise<unknown> =>
  new Promise((resolve, reject) => {
    stream.once('data', resolve);
    stream.once('error', reject);
  });

describe('cache service: the gRPC transport as a client sees it', () => {
  let cache: RunningCache;
  let session: ClientHttp2Session;
  let bytesClient: Client;

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 1000 }, 64 * 1024);
    session = connect(`http://${cache.address}`);
    bytesClient = new Client(cache.address, credentials.createInsecure());
  });

  afterAll(async () => {
    session.destroy();
    bytesClient.close();
    await cache.close();
  });

  describe('calls the server cannot route', () => {
    it.each([
      ['an unknown method of the cache service', `/${CACHE_SERVICE_NAME}/Nope`],
      ['an unknown service', '/cache.v9.NoSuchService/Get'],
    ])('should answer %s UNIMPLEMENTED, naming the path, and keep serving the connection', async (_case, path) => {
      await expect(unary(bytesClient, path, Buffer.alloc(0))).rejects.toMatchObject({ code: status.UNIMPLEMENTED, details: expect.stringContaining(path) as unknown });
      await expect(callWithBytes(bytesClient, 'Get', getRequest('k'))).resolves.toMatchObject({ found: false });
      // At the wire: HTTP 200 and grpc-status 12 (grpc-js answers trailers-only, its message not percent-encoded).
      const answer = await exchange(session, grpcHeaders(path), frame(Buffer.alloc(0)));
      expect(answer.headers[':status']).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^application\/grpc/);
      expect(grpcStatus(answer)).toBe(String(status.UNIMPLEMENTED));
      await expectServing(session);
    });

    it.each([
      ['text/plain', 'text/plain'],
      ['application/json', 'application/json'],
      ['no content-type at all', undefined],
    ])('should answer a POST with %s HTTP 415 and no grpc-status, and keep serving the connection', async (_case, contentType) => {
      const headers = grpcHeaders(GET, { [h2.HTTP2_HEADER_CONTENT_TYPE]: contentType });
      if (contentType === undefined) delete headers[h2.HTTP2_HEADER_CONTENT_TYPE];
      const answer = await exchange(session, headers, Buffer.from('hello'));
      // PROTOCOL-HTTP2.md: 415, so that a plain HTTP client does not read a gRPC error's 200 as success.
      expect(answer.headers[':status']).toBe(415);
      expect(answer.headers['grpc-status']).toBeUndefined();
      expect(answer.trailers?.['grpc-status']).toBeUndefined();
      expect(answer.rstCode).toBe(h2.NGHTTP2_NO_ERROR);
      await expectServing(session);
    });

    it('should close a plain HTTP/1.1 request without an HTTP/1.1 answer, and keep serving gRPC', async () => {
      // grpc-js' server speaks HTTP/2 only (prior knowledge): the HTTP/1.1 request is not a
      // connection preface, and it writes a GOAWAY and closes; node:http reports the bytes as a
      // parse error (HPE_INVALID_CONSTANT). What a client notices: no response, an error.
      const outcome = await new Promise<string>((resolve) => {
        get(`http://${cache.address}/`, { agent: false }, (response) => {
          response.resume();
          resolve(`answered ${String(response.statusCode)}`);
        }).on('error', (err: NodeJS.ErrnoException) => resolve(`failed ${String(err.code)}`));
      });
      expect(outcome).toMatch(/^failed /);
      await expectServing(session);
      await expect(callWithBytes(bytesClient, 'Get', getRequest('k'))).resolves.toMatchObject({ found: false });
    });
  });

  describe('deadlines and cancellation', () => {
    it('should end a Subscribe stream itself at the deadline of its grpc-timeout header, DEADLINE_EXCEEDED in the trailers, and drop the subscription', async () => {
      const started = performance.now();
      const stream = session.request(grpcHeaders(SUBSCRIBE, { 'grpc-timeout': '200m' }));
      const answer = answerOf(stream);
      const subscribed = new Promise((resolve) => stream.once('data', resolve));
      stream.end(frame(subscribeRequest('x')));
      // No timer on this side: only the server can end the stream.
      await subscribed;
      expect(await openSubscriptions(cache)).toBe(1);
      // A watchdog, far past the deadline, so that a server that never ends the stream fails here.
      const watchdog = setTimeout(() => stream.close(h2.NGHTTP2_CANCEL), 5000);
      const ended = await answer.finally(() => clearTimeout(watchdog));
      expect(ended.rstCode).toBe(h2.NGHTTP2_NO_ERROR);
      expect(performance.now() - started).toBeGreaterThanOrEqual(195);
      expect(ended.headers[':status']).toBe(200);
      expect(ended.body.length).toBeGreaterThan(0); // SUBSCRIBED came first
      expect(ended.trailers?.['grpc-status']).toBe(String(status.DEADLINE_EXCEEDED));
      await subscriptionsBecome(cache, 0);
      await expectServing(session);
    });

    it('should refuse a call whose grpc-timeout header does not parse with INTERNAL, open no subscription, and keep serving', async () => {
      // grpc-js: INTERNAL 'Invalid grpc-timeout value "abc"', trailers-only (as grpc-go: INTERNAL "malformed grpc-timeout").
      const answer = await exchange(session, grpcHeaders(SUBSCRIBE, { 'grpc-timeout': 'abc' }), frame(subscribeRequest('x')));
      expect(answer.headers[':status']).toBe(200);
      expect(grpcStatus(answer)).toBe(String(status.INTERNAL));
      expect(answer.body.length).toBe(0);
      expect(await openSubscriptions(cache)).toBe(0);
      await expectServing(session);
    });

    it('should drop the subscription of a Subscribe stream its client cancels, and keep serving that client', async () => {
      const { path, requestSerialize, responseDeserialize } = cacheServiceDefinition().Subscribe;
      const stream = bytesClient.makeServerStreamRequest(path, requestSerialize, responseDeserialize, { prefixes: ['cancel:'] });
      const ended = new Promise<ServiceError>((resolve) => stream.once('error', resolve));
      await expect(firstMessage(stream)).resolves.toMatchObject({ kind: 'SUBSCRIBED' });
      expect(await openSubscriptions(cache)).toBe(1);
      stream.cancel();
      expect((await ended).code).toBe(status.CANCELLED);
      await subscriptionsBecome(cache, 0);
      await expect(callWithBytes(bytesClient, 'Get', getRequest('k'))).resolves.toMatchObject({ found: false });
    });
  });

  describe('status details', () => {
    // No error of the cache carries client text (validation messages name fields and limits), so
    // this is a fixed one with characters grpc-js percent-encodes (space, '"'); none is non-ASCII.
    const details = 'prefixes: at least one is required ("" watches every key)';

    it('should deliver error details exactly to a grpc-js client', async () => {
      const { path, responseDeserialize } = cacheServiceDefinition().Subscribe;
      const stream = bytesClient.makeServerStreamRequest(path, (bytes: Buffer) => bytes, responseDeserialize, subscribeRequest());
      await expect(firstMessage(stream)).rejects.toMatchObject({ code: status.INVALID_ARGUMENT, details });
    });

    it('should send grpc-message as printable ASCII that percent-decodes to the details', async () => {
      const answer = await exchange(session, grpcHeaders(SUBSCRIBE), frame(subscribeRequest()));
      expect(grpcStatus(answer)).toBe(String(status.INVALID_ARGUMENT));
      const message = grpcMessage(answer);
      expect(typeof message).toBe('string');
      expect(message).toMatch(/^[\x20-\x7e]*$/);
      expect(decodeURIComponent(message as string)).toBe(details);
    });
  });

  describe('request messages', () => {
    it('should answer request bytes protobuf cannot decode INTERNAL, and keep serving', async () => {
      // A length-delimited field whose length varint never ends.
      await expect(callWithBytes(bytesClient, 'Get', Buffer.from([0x0a, 0xff]))).rejects.toMatchObject({ code: status.INTERNAL });
      const answer = await exchange(session, grpcHeaders(GET), frame(Buffer.from([0x0a, 0xff])));
      expect(answer.headers[':status']).toBe(200);
      expect(grpcStatus(answer)).toBe(String(status.INTERNAL));
      await expectServing(session);
    });

    it('should answer a message flagged compressed without a grpc-encoding header with a status, and keep serving', async () => {
      // PROTOCOL-HTTP2.md: without grpc-encoding the Compressed-Flag must be 0. grpc-js reads the
      // message as identity anyway and answers OK; grpc-go and grpc-core answer INTERNAL. Pinned:
      // one of the two, as a gRPC status on that stream, and the connection unharmed.
      const answer = await exchange(session, grpcHeaders(GET), frame(getRequest('k'), 1));
      expect(answer.headers[':status']).toBe(200);
      expect([String(status.OK), String(status.INTERNAL)]).toContain(grpcStatus(answer));
      await expectServing(session);
    });

    it('should answer a gzip-compressed request (grpc-encoding: gzip) with a status, and keep serving', async () => {
      // grpc-js decompresses it and answers OK; its responses advertise grpc-accept-encoding:
      // identity,deflate,gzip. Not pinned: a server may refuse compression (UNIMPLEMENTED).
      const answer = await exchange(session, grpcHeaders(GET, { 'grpc-encoding': 'gzip' }), frame(gzipSync(getRequest('k')), 1));
      expect(answer.headers[':status']).toBe(200);
      expect(grpcStatus(answer)).toMatch(/^\d+$/);
      await expectServing(session);
    });

    it('should answer a message compressed with an encoding it does not know UNIMPLEMENTED, and keep serving', async () => {
      // PROTOCOL-HTTP2.md (compression): an unsupported message encoding is UNIMPLEMENTED.
      const answer = await exchange(session, grpcHeaders(GET, { 'grpc-encoding': 'snappy' }), frame(getRequest('k'), 1));
      expect(answer.headers[':status']).toBe(200);
      expect(grpcStatus(answer)).toBe(String(status.UNIMPLEMENTED));
      await expectServing(session);
    });

    it('should refuse a Subscribe request larger than the message limit RESOURCE_EXHAUSTED', async () => {
      const { path, responseDeserialize } = cacheServiceDefinition().Subscribe;
      const stream = bytesClient.makeServerStreamRequest(path, (bytes: Buffer) => bytes, responseDeserialize, subscribeRequest('p'.repeat(200 * 1024)));
      await expect(firstMessage(stream)).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
      expect(await openSubscriptions(cache)).toBe(0);
    });

    it('should refuse a 200 KiB length prefix on its own, before the message arrives, and keep serving', async () => {
      const stream = session.request(grpcHeaders(SUBSCRIBE));
      const answer = answerOf(stream);
      stream.write(frame(Buffer.alloc(200 * 1024)).subarray(0, 5));
      const refused = await answer;
      expect(refused.headers[':status']).toBe(200);
      expect(grpcStatus(refused)).toBe(String(status.RESOURCE_EXHAUSTED));
      await expectServing(session);
    });
  });

  describe('metadata', () => {
    it('should accept custom ASCII and -bin metadata on a call and answer it normally', async () => {
      const metadata = new Metadata();
      metadata.set('x-request-id', 'req-42 / tenant=a');
      metadata.set('x-trace-bin', Buffer.from([0x00, 0xff, 0x10, 0x80]));
      await unary(bytesClient, cacheServiceDefinition().Set.path, requestWithKeyBytes(Buffer.from('transport:metadata'), Buffer.from('with metadata')), metadata);
      const stored = await callWithBytes(bytesClient, 'Get', getRequest('transport:metadata'));
      expect(stored.value.toString()).toBe('with metadata');
      // Raw: a -bin value in unpadded base64, which PROTOCOL-HTTP2.md says a receiver must accept.
      const answer = await exchange(session, grpcHeaders(GET, { 'x-request-id': 'raw', 'x-trace-bin': Buffer.from([0xfe, 0x01]).toString('base64').replace(/=+$/, '') }), frame(getRequest('transport:metadata')));
      expect(grpcStatus(answer)).toBe('0');
    });
  });

  describe('streams reset by the client', () => {
    /** Opens `count` Get streams, sends each its headers and part of a message, then resets them all (CANCEL). */
    async function resetMidRequest(on: ClientHttp2Session, count: number): Promise<void> {
      const streams = Array.from({ length: count }, () => on.request(grpcHeaders(GET)));
      const closed = streams.map((stream) => new Promise((resolve) => stream.on('close', resolve)));
      await Promise.all(streams.map((stream) => new Promise((resolve) => stream.write(Buffer.from([0, 0, 0, 0, 16, 0x0a]), resolve))));
      for (const stream of streams) stream.close(h2.NGHTTP2_CANCEL);
      await Promise.all(closed);
    }

    it('should keep serving other calls through a reset mid-request, and a new connection after 200 of them in a burst', async () => {
      const subscription = await subscribe(cache.address, ['reset:']);
      const burst = connect(`http://${cache.address}`);
      try {
        burst.on('error', () => undefined);
        await new Promise<void>((resolve, reject) => burst.once('remoteSettings', () => resolve()).once('error', reject));
        // One reset beside a call in flight on the same connection: the call is answered.
        const inFlight = exchange(burst, grpcHeaders(GET), frame(getRequest('k')));
        await resetMidRequest(burst, 1);
        expect(grpcStatus(await inFlight)).toBe('0');
        // 200 in four rounds of 50, under the 100 concurrent streams a connection may have.
        for (let round = 0; round < 4; round++) await resetMidRequest(burst, 50);
        // grpc-js keeps serving that connection too; not pinned (a server may GOAWAY a connection
        // that resets this many streams, as a rapid-reset defence).
        await expectServing(session);
        const fresh = connect(`http://${cache.address}`);
        try {
          await expectServing(fresh);
        } finally {
          fresh.destroy();
        }
        // The Subscribe stream on another connection saw nothing of it and still announces.
        const writer = rawClient(cache.address);
        await rawCall(writer, 'Set', { key: 'reset:after', value: Buffer.from('v') });
        writer.close();
        await subscription.waitFor('WRITTEN reset:after');
      } finally {
        burst.destroy();
        subscription.cancel();
      }
    });
  });

  // Beyond grpc-js, whose server reads and answers such a flood into its own memory.
  describe('a bidirectional client that sends and never reads', () => {
    it('should stop reading its requests while its answers wait, serve other calls meanwhile, and answer them all once it reads', async () => {
      const REQUESTS = 20_000;
      // ServerReflectionRequest { list_services: "*" } (field 7), 8 bytes framed: 160 KB in all.
      const listServices = frame(Buffer.from([(7 << 3) | 2, 1, 0x2a]));
      const flood = connect(`http://${cache.address}`);
      try {
        flood.on('error', () => undefined);
        const stream = flood.request(grpcHeaders('/grpc.reflection.v1.ServerReflection/ServerReflectionInfo'));
        stream.on('error', () => undefined);
        const responded = new Promise<IncomingHttpHeaders>((resolve) => stream.once('response', resolve));
        let sent = false;
        stream.write(Buffer.concat(Array.from({ length: REQUESTS }, () => listServices)), () => (sent = true));
        await new Promise((resolve) => setTimeout(resolve, 1000));
        // Held back by flow control: the server stopped taking requests it could not answer.
        expect(sent).toBe(false);
        await expectServing(session);
        // Once the client reads, every request is answered, and the call ends OK.
        const chunks: Buffer[] = [];
        const trailers = new Promise<IncomingHttpHeaders>((resolve) => stream.once('trailers', resolve));
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        const ended = new Promise((resolve) => stream.once('end', resolve));
        stream.end();
        expect((await responded)[':status']).toBe(200);
        expect((await trailers)['grpc-status']).toBe('0');
        await ended;
        expect(sent).toBe(true);
        const body = Buffer.concat(chunks);
        let messages = 0;
        for (let at = 0; at < body.length; at += 5 + body.readUInt32BE(at + 1)) messages++;
        expect(messages).toBe(REQUESTS);
      } finally {
        flood.destroy();
      }
    });
  });
});

describe('cache service: grpc.health.v1.Health', () => {
  let cache: RunningCache;

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 1000 }, 64 * 1024);
  });

  afterAll(() => cache.close());

  it('should report SERVING for the server and the cache service, and NOT_FOUND for a service it does not know', async () => {
    expect(await healthCheck(cache.address, '')).toBe('SERVING');
    expect(await healthCheck(cache.address, CACHE_SERVICE_NAME)).toBe('SERVING');
    await expect(healthCheck(cache.address, 'nope.v1.Unknown')).rejects.toMatchObject({ code: status.NOT_FOUND });
  });

  it('should send a Watch of the server SERVING first, then NOT_SERVING once it stops serving', async () => {
    const client = healthClient(cache.address);
    const watch = client.Watch({ service: '' });
    const statuses: string[] = [];
    watch.on('data', (message: { status: string }) => statuses.push(message.status));
    watch.on('error', () => undefined);
    try {
      await eventually(() => statuses.length > 0, 5000, 'first Watch message');
      expect(statuses).toEqual(['SERVING']);
      cache.service.api.stopServing!();
      await eventually(() => statuses.length > 1, 5000, 'second Watch message');
      expect(statuses).toEqual(['SERVING', 'NOT_SERVING']);
      expect(await healthCheck(cache.address, '')).toBe('NOT_SERVING');
    } finally {
      watch.cancel();
      client.close();
    }
  });
});

describe('cache service: graceful drain', () => {
  it('should end Subscribe UNAVAILABLE, not wait the grace period for idle connections, and refuse calls afterwards', async () => {
    const cache = await startCache({ kind: 'memory', capacity: 1000 }, 64 * 1024);
    const idle = rawClient(cache.address);
    try {
      await rawCall(idle, 'Set', { key: 'drain', value: Buffer.from('v') });
      const subscription = await subscribe(cache.address, ['drain:']);
      expect(subscription.messages[0]).toMatchObject({ kind: 'SUBSCRIBED' } satisfies Partial<Invalidation__Output>);
      const started = performance.now();
      await cache.service.api.drain(30_000);
      // Behaviour, not speed: an idle connection and an ended stream do not hold the drain open.
      expect(performance.now() - started).toBeLessThan(5000);
      expect((await subscription.ended).code).toBe(status.UNAVAILABLE);
      await expect(rawCall(idle, 'Get', { key: 'drain' })).rejects.toMatchObject({ code: status.UNAVAILABLE });
      const late = rawClient(cache.address);
      await expect(rawCall(late, 'Get', { key: 'drain' })).rejects.toMatchObject({ code: status.UNAVAILABLE });
      late.close();
    } finally {
      idle.close();
      await cache.close();
    }
    // Longer than the grace period, so that a drain that waits it out fails on the assertion above.
  }, 45_000);
});
