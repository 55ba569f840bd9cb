import { connect, constants as h2, type ClientHttp2Session, type ClientHttp2Stream } from 'node:http2';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Client, credentials, status, type ServiceError } from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { cacheServiceDefinition, createCacheClient, type GetManyResponse__Output, type Invalidation__Output } from '@sp/cache-client';
import { callWithBytes, rawCall, rawClient, requestWithKeyBytes, startCache, type RawClient, type RunningCache } from './cache-fixture.js';
import { MAX_CONCURRENT_STREAMS } from '../src/server.js';

/** A GetManyRequest or SubscribeRequest (repeated string field 1) whose entries are exactly these bytes. */
const repeatedWithBytes = (entries: Buffer[]): Buffer => {
  const writer = protobuf.Writer.create();
  for (const entry of entries) writer.uint32((1 << 3) | 2).bytes(entry);
  return Buffer.from(writer.finish());
};

/** One call of a method with any request and response, its request bytes sent as they are. */
function unaryWithBytes(client: Client, method: 'GetMany', request: Buffer): Promise<unknown> {
  const { path, responseDeserialize } = cacheServiceDefinition()[method];
  return new Promise((resolve, reject) => client.makeUnaryRequest(path, (bytes: Buffer) => bytes, responseDeserialize, request, (err: ServiceError | null, response?: unknown) => (err ? reject(err) : resolve(response))));
}

/** Opens Subscribe with these request bytes; resolves with its first message, rejects with the status it ended with. */
function subscribeWithBytes(client: Client, request: Buffer): Promise<Invalidation__Output> {
  const { path, responseDeserialize } = cacheServiceDefinition().Subscribe;
  const stream = client.makeServerStreamRequest(path, (bytes: Buffer) => bytes, responseDeserialize, request);
  return new Promise<Invalidation__Output>((resolve, reject) => {
    stream.once('data', (message: Invalidation__Output) => resolve(message));
    stream.once('error', reject);
  }).finally(() => stream.cancel());
}

/** A gRPC message frame: uncompressed, 4-byte length, the message. */
const frame = (message: Buffer): Buffer => Buffer.concat([Buffer.from([0]), Buffer.from([0, 0, 0, 0].map((_, i) => (message.length >>> (8 * (3 - i))) & 0xff)), message]);

describe('cache service: what the wire may carry', () => {
  let cache: RunningCache;
  let bytesClient: Client;
  let raw: RawClient;

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 1000 }, 64 * 1024);
    bytesClient = new Client(cache.address, credentials.createInsecure());
    raw = rawClient(cache.address);
  });

  afterAll(async () => {
    bytesClient.close();
    raw.close();
    await cache.close();
  });

  describe('keys that are not UTF-8', () => {
    it.each([
      ['<FF>', [0xff]],
      ['<FE>', [0xfe]],
      ['a truncated 4-byte sequence <F0 9F 98>', [0xf0, 0x9f, 0x98]],
      ['an overlong encoding <C0 80>', [0xc0, 0x80]],
      ['a UTF-16 surrogate <ED A0 80>', [0xed, 0xa0, 0x80]],
      ['a lone continuation byte inside text', [0x61, 0x80, 0x62]],
    ])('should refuse %s with INVALID_ARGUMENT on every RPC', async (_case, bytes) => {
      const key = Buffer.from(bytes);
      for (const method of ['Get', 'Set', 'Remove', 'Increment', 'SetIfAbsent', 'RemoveIfEquals'] as const) {
        await expect(callWithBytes(bytesClient, method, requestWithKeyBytes(key, method.startsWith('Set') || method === 'RemoveIfEquals' ? Buffer.from('v') : undefined))).rejects.toMatchObject({
          code: status.INVALID_ARGUMENT,
          details: 'key must be valid UTF-8',
        });
      }
    });

    it('should keep <FF>, <FE> and <EF BF BD> apart: only the last is a key, U+FFFD', async () => {
      await callWithBytes(bytesClient, 'Set', requestWithKeyBytes(Buffer.from([0xef, 0xbf, 0xbd]), Buffer.from('replacement character')));
      const stored = await rawCall(raw, 'Get', { key: '\uFFFD' });
      expect(stored.value.toString()).toBe('replacement character');
      await expect(callWithBytes(bytesClient, 'Set', requestWithKeyBytes(Buffer.from([0xff]), Buffer.from('overwritten')))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
      await expect(callWithBytes(bytesClient, 'Get', requestWithKeyBytes(Buffer.from([0xfe])))).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
      expect((await rawCall(raw, 'Get', { key: '\uFFFD' })).value.toString()).toBe('replacement character');
    });

    it('should refuse GetMany when any of its keys is not UTF-8, and serve one whose keys all are', async () => {
      await rawCall(raw, 'Set', { key: '\uFFFD', value: Buffer.from('replacement character') });
      const valid = [Buffer.from('a'), Buffer.from([0xef, 0xbf, 0xbd])];
      for (const invalid of [[0xff], [0xfe], [0xc0, 0x80], [0x61, 0x80, 0x62]]) {
        await expect(unaryWithBytes(bytesClient, 'GetMany', repeatedWithBytes([...valid, Buffer.from(invalid)]))).rejects.toMatchObject({
          code: status.INVALID_ARGUMENT,
          details: 'keys must be valid UTF-8',
        });
      }
      const answer = (await unaryWithBytes(bytesClient, 'GetMany', repeatedWithBytes(valid))) as GetManyResponse__Output;
      expect(answer.entries.map((entry) => entry.value.toString())).toEqual(['', 'replacement character']);
    });

    it('should refuse Subscribe when any of its prefixes is not UTF-8, and accept U+FFFD itself', async () => {
      for (const invalid of [[0xff], [0xfe], [0xed, 0xa0, 0x80]]) {
        await expect(subscribeWithBytes(bytesClient, repeatedWithBytes([Buffer.from('session:'), Buffer.from(invalid)]))).rejects.toMatchObject({
          code: status.INVALID_ARGUMENT,
          details: 'prefixes must be valid UTF-8',
        });
      }
      await expect(subscribeWithBytes(bytesClient, repeatedWithBytes([Buffer.from('session:'), Buffer.from([0xef, 0xbf, 0xbd])]))).resolves.toMatchObject({ kind: 'SUBSCRIBED' });
    });

    it('should accept valid UTF-8 keys of every length of sequence, sent as raw bytes', async () => {
      const key = Buffer.from('a-é-✓-😀', 'utf8');
      await callWithBytes(bytesClient, 'Set', requestWithKeyBytes(key, Buffer.from('ok')));
      expect((await rawCall(raw, 'Get', { key: 'a-é-✓-😀' })).value.toString()).toBe('ok');
    });
  });

  describe('messages and streams per connection', () => {
    it('should refuse a message larger than the largest value and a key (RESOURCE_EXHAUSTED), before decoding it', async () => {
      await expect(rawCall(raw, 'Set', { key: 'big', value: Buffer.alloc(64 * 1024 + 8192) })).rejects.toMatchObject({ code: status.RESOURCE_EXHAUSTED });
      // Just over the value limit still gets the validation's own answer.
      await expect(rawCall(raw, 'Set', { key: 'big', value: Buffer.alloc(64 * 1024 + 1) })).rejects.toMatchObject({ code: status.INVALID_ARGUMENT });
    });

    it(`should advertise at most ${MAX_CONCURRENT_STREAMS} concurrent streams per connection and serve no more at once`, async () => {
      const session: ClientHttp2Session = connect(`http://${cache.address}`);
      try {
        await new Promise<void>((resolve, reject) => session.once('remoteSettings', () => resolve()).once('error', reject));
        expect(session.remoteSettings.maxConcurrentStreams).toBe(MAX_CONCURRENT_STREAMS);
        expect(MAX_CONCURRENT_STREAMS).toBeLessThanOrEqual(1000);
        const open = (): ClientHttp2Stream =>
          session.request({
            [h2.HTTP2_HEADER_METHOD]: 'POST',
            [h2.HTTP2_HEADER_PATH]: cacheServiceDefinition().Get.path,
            [h2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
            te: 'trailers',
          });
        const complete = (stream: ClientHttp2Stream): Promise<'answered' | 'refused'> => {
          const ended = new Promise<'answered' | 'refused'>((resolve) => {
            stream.on('response', () => resolve('answered'));
            stream.on('error', () => resolve('refused'));
            stream.on('close', () => resolve('refused'));
          });
          stream.end(frame(requestWithKeyBytes(Buffer.from('k'))));
          return ended;
        };
        // Every allowed stream held open: headers sent, the request message never finished.
        const held = Array.from({ length: MAX_CONCURRENT_STREAMS }, () => {
          const stream = open();
          stream.on('error', () => undefined);
          stream.write(Buffer.from([0, 0, 0, 0, 16]));
          return stream;
        });
        // One more, complete: it must not be served while the others are open (queued by the
        // client, or refused by the server).
        const extra = complete(open());
        const early = await Promise.race([extra, new Promise((resolve) => setTimeout(() => resolve('waiting'), 500))]);
        expect(early).toMatch(/^(waiting|refused)$/);
        // Another connection is served meanwhile: the bound is per connection.
        expect((await rawCall(raw, 'Get', { key: 'k' })).found).toBe(false);
        // Once the server has seen a stream end, a new one on this connection is served.
        held[0]!.close(h2.NGHTTP2_CANCEL);
        await extra;
        await new Promise((resolve) => setTimeout(resolve, 100));
        expect(await complete(open())).toBe('answered');
        for (const stream of held) stream.close(h2.NGHTTP2_CANCEL);
      } finally {
        session.destroy();
      }
    });

    it.each([
      ['no request message', 0, 'Received no request message'],
      ['two request messages', 2, 'Received a second request message'],
    ])('should answer a unary call with %s UNIMPLEMENTED, as grpc-js does, and keep serving', async (_case, messages, details) => {
      const { path, responseDeserialize } = cacheServiceDefinition().Get;
      const answered = new Promise((resolve, reject) => {
        const call = bytesClient.makeClientStreamRequest(path, (bytes: Buffer) => bytes, responseDeserialize, (err: ServiceError | null, response?: unknown) => (err ? reject(err) : resolve(response)));
        for (let i = 0; i < messages; i++) call.write(requestWithKeyBytes(Buffer.from('k')));
        call.end();
      });
      await expect(answered).rejects.toMatchObject({ code: status.UNIMPLEMENTED, details: expect.stringContaining(details) as unknown });
      await rawCall(raw, 'Set', { key: 'after-framing', value: Buffer.from('ok') });
      expect((await rawCall(raw, 'Get', { key: 'after-framing' })).value.toString()).toBe('ok');
    });

    it('should still serve every call of a client that sends many more at once (its channel queues them)', async () => {
      const client = createCacheClient<string>({ address: cache.address, channelOptions: { 'grpc.use_local_subchannel_pool': 1 } });
      try {
        await client.set('many', 'v');
        const answers = await Promise.all(Array.from({ length: MAX_CONCURRENT_STREAMS * 5 }, () => client.get('many')));
        expect(answers.every((answer) => answer === 'v')).toBe(true);
      } finally {
        client.close();
      }
    });
  });
});
