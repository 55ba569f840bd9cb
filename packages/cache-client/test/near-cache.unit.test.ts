import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Server, ServerCredentials, type sendUnaryData, type ServerUnaryCall, type ServerWritableStream } from '@grpc/grpc-js';
import { sleep } from '../../../test/support/eventually.js';
import { cacheServiceDefinition, createCacheClient, stringSerializer, type CacheClient, type CacheRequest__Output, type CacheResponse, type Invalidation, type SubscribeRequest__Output } from '@sp/cache-client';

/**
 * The near cache's rules against a real gRPC server whose Get answers and Subscribe messages each
 * test controls: which messages arrive, and when a read is answered relative to them, is exactly
 * what the rules are about.
 */
const values = new Map<string, string>();
const gets: string[] = [];
/** A Get of a key in here waits until the test releases it. */
const held = new Map<string, () => void>();
const streams: Array<ServerWritableStream<SubscribeRequest__Output, Invalidation>> = [];

function get(call: ServerUnaryCall<CacheRequest__Output, CacheResponse>, callback: sendUnaryData<CacheResponse>): void {
  const { key } = call.request;
  gets.push(key);
  // The value is read now; a held key's answer leaves when the test releases it.
  const value = values.get(key);
  const answer = (): void => callback(null, value === undefined ? { found: false } : { found: true, value: Buffer.from(value) });
  if (held.has(key)) held.set(key, answer);
  else answer();
}

function subscribe(call: ServerWritableStream<SubscribeRequest__Output, Invalidation>): void {
  streams.push(call);
  call.write({ sequence: 1, kind: 'SUBSCRIBED' });
}

let server: Server;
let address: string;
let client: CacheClient<string>;

beforeAll(async () => {
  server = new Server();
  server.addService(cacheServiceDefinition(), { Get: get, Subscribe: subscribe });
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  address = `127.0.0.1:${port}`;
});

afterAll(() => server.forceShutdown());

afterEach(() => {
  client.close();
  values.clear();
  gets.length = 0;
  held.clear();
  streams.length = 0;
});


async function nearClient(maxSilenceMs = 3000): Promise<CacheClient<string>> {
  client = createCacheClient<string>({ address, retries: 0, nearCache: { prefixes: ['session:'], maxSilenceMs } }, stringSerializer);
  await client.nearCache!.whenLive();
  return client;
}

describe('near cache', () => {
  it('should answer a second get from memory, and read keys outside its prefixes through every time', async () => {
    await nearClient();
    values.set('session:a', 'A');
    values.set('other', 'O');
    for (let i = 0; i < 3; i++) {
      expect(await client.get('session:a')).toBe('A');
      expect(await client.get('other')).toBe('O');
    }
    expect(gets).toEqual(['session:a', 'other', 'other', 'other']);
    expect(client.nearCache).toMatchObject({ live: true, entries: 1, hits: 2, misses: 1 });
  });

  it('should peek only at what it holds while live, without a call or a counted miss', async () => {
    await nearClient();
    values.set('session:a', 'A');
    values.set('other', 'O');
    expect(client.peek('session:a')).toBeUndefined(); // not read yet: only get can tell
    expect(await client.get('session:a')).toBe('A');
    expect(client.peek('session:a')).toBe('A');
    expect(client.peek('other')).toBeUndefined(); // not covered
    expect(gets).toEqual(['session:a']);
    expect(client.nearCache).toMatchObject({ hits: 1, misses: 1 });
    streams[0]!.write({ sequence: 3, kind: 'HEARTBEAT' }); // a gap: no longer live
    await sleep(50);
    expect(client.peek('session:a')).toBeUndefined();
  });

  it('should drop a key when its change is announced', async () => {
    await nearClient();
    values.set('session:a', 'old');
    expect(await client.get('session:a')).toBe('old');
    values.set('session:a', 'new');
    streams[0]!.write({ sequence: 2, kind: 'WRITTEN', key: 'session:a' });
    await sleep(50);
    expect(await client.get('session:a')).toBe('new');
  });

  it('should not keep a value whose read began before the announcement of its key', async () => {
    await nearClient();
    values.set('session:a', 'old');
    held.set('session:a', () => undefined);
    const reading = client.get('session:a'); // Get reads "old" at the server, its answer is held
    await sleep(50);
    values.set('session:a', 'new');
    streams[0]!.write({ sequence: 2, kind: 'WRITTEN', key: 'session:a' });
    await sleep(50);
    const release = held.get('session:a')!;
    held.delete('session:a');
    release();
    expect(await reading).toBe('old'); // it began before the write: the caller may get it
    expect(await client.get('session:a')).toBe('new'); // but the near cache did not keep it
    expect(gets).toEqual(['session:a', 'session:a']);
  });

  it('should flush and read through on a sequence gap, and serve from memory again once subscribed anew', async () => {
    await nearClient();
    values.set('session:a', 'A');
    await client.get('session:a');
    expect(client.nearCache!.entries).toBe(1);
    streams[0]!.write({ sequence: 3, kind: 'HEARTBEAT' }); // 2 never came
    await sleep(50);
    expect(client.nearCache).toMatchObject({ entries: 0, flushes: 1 });
    await client.nearCache!.whenLive();
    expect(streams).toHaveLength(2);
    await client.get('session:a');
    await client.get('session:a');
    expect(gets).toEqual(['session:a', 'session:a']);
  });

  it('should count a silent stream as lost after maxSilenceMs', async () => {
    await nearClient(300);
    values.set('session:a', 'A');
    await client.get('session:a');
    await sleep(450);
    expect(client.nearCache!.flushes).toBe(1);
    expect(streams.length).toBeGreaterThanOrEqual(2);
  });

  it('should flush when the stream ends, and not keep what it reads while not subscribed', async () => {
    await nearClient();
    values.set('session:a', 'A');
    await client.get('session:a');
    streams[0]!.end();
    await sleep(20);
    expect(client.nearCache).toMatchObject({ entries: 0, flushes: 1 });
  });
});
