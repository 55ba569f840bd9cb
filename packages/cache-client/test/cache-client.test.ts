import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Server, ServerCredentials, status, type sendUnaryData, type ServerUnaryCall } from '@grpc/grpc-js';
import { AppError } from '@sp/core';
import {
  bufferSerializer,
  cacheServiceDefinition,
  createCacheClient,
  jsonSerializer,
  stringSerializer,
  type CacheGrpcServiceHandlers,
  type CacheRequest__Output,
  type CacheResponse,
  type GetManyRequest__Output,
  type GetManyResponse,
  type IncrementRequest__Output,
  type IncrementResponse,
  type Serializer,
} from '@sp/cache-client';

/**
 * A real gRPC server of cache.v1.CacheGrpcService whose answers each test scripts: the client's
 * retry and deadline rules are about what travels on the wire, so they are tested against the wire.
 */
interface Attempt {
  method: string;
  request: CacheRequest__Output | IncrementRequest__Output;
  deadline: number;
}
type Answer = { code: status; details?: string } | { response: CacheResponse | IncrementResponse } | { hang: true };

const attempts: Attempt[] = [];
let script: (attemptNo: number, request: CacheRequest__Output | IncrementRequest__Output) => Answer = () => ({ response: { found: false } });
const store = new Map<string, Buffer>();

function answer<Req extends CacheRequest__Output | IncrementRequest__Output, Res>(method: string) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>) => {
    const deadline = call.getDeadline();
    attempts.push({ method, request: call.request, deadline: deadline instanceof Date ? deadline.getTime() : Number(deadline) });
    const scripted = script(attempts.filter((a) => a.method === method).length, call.request);
    if ('hang' in scripted) return; // grpc-js ends the call when its deadline passes
    if ('code' in scripted) {
      callback({ code: scripted.code, details: scripted.details ?? status[scripted.code] });
      return;
    }
    callback(null, scripted.response as Res);
  };
}

const handlers: Omit<CacheGrpcServiceHandlers, 'Subscribe'> = {
  Get: answer('Get'),
  Set: answer('Set'),
  Remove: answer('Remove'),
  Increment: answer('Increment'),
  SetIfAbsent: answer('SetIfAbsent'),
};

let server: Server;
let address: string;

beforeAll(async () => {
  server = new Server();
  server.addService(cacheServiceDefinition(), handlers);
  const port = await new Promise<number>((resolve, reject) => server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
  address = `127.0.0.1:${port}`;
});

afterAll(() => server.forceShutdown());

afterEach(() => {
  attempts.length = 0;
  store.clear();
  script = () => ({ response: { found: false } });
});

/** Resolves with the AppError a call rejected with. */
async function failure(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('cache client retries', () => {
  it('should retry after UNAVAILABLE and succeed when the service comes back', async () => {
    script = (n) => (n < 3 ? { code: status.UNAVAILABLE } : { response: { found: true, value: Buffer.from('"back"') } });
    const client = createCacheClient({ address, retries: 2, deadlineMs: 5000 });
    await expect(client.get('k')).resolves.toBe('back');
    expect(attempts.map((a) => a.method)).toEqual(['Get', 'Get', 'Get']);
    client.close();
  });

  it('should give up with 503 after the configured number of retries', async () => {
    script = () => ({ code: status.UNAVAILABLE });
    const client = createCacheClient({ address, retries: 2, deadlineMs: 5000 });
    const err = await failure(client.set('k', 1));
    expect(err).toMatchObject({ status: 503, code: 'unavailable' });
    expect(attempts).toHaveLength(3);
    client.close();
  });

  it.each([
    ['RESOURCE_EXHAUSTED (a full partition)', status.RESOURCE_EXHAUSTED, 503],
    ['INVALID_ARGUMENT', status.INVALID_ARGUMENT, 500],
    ['FAILED_PRECONDITION', status.FAILED_PRECONDITION, 500],
    ['INTERNAL', status.INTERNAL, 500],
    ['UNKNOWN', status.UNKNOWN, 500],
  ])('should not retry %s', async (_name, code, httpStatus) => {
    script = () => ({ code, details: 'scripted refusal' });
    const client = createCacheClient({ address, retries: 5, deadlineMs: 5000 });
    const err = await failure(client.increment('counter'));
    expect(err.status).toBe(httpStatus);
    expect(err.expose).toBe(false);
    expect(attempts).toHaveLength(1);
    client.close();
  });

  it('should not retry a call that ran out of its deadline (the service may still be working on it)', async () => {
    script = () => ({ hang: true });
    const client = createCacheClient({ address, retries: 5, deadlineMs: 300 });
    const err = await failure(client.get('slow'));
    expect(err).toMatchObject({ status: 503, code: 'unavailable' });
    expect(attempts).toHaveLength(1);
    client.close();
  });
});

describe('cache client deadline', () => {
  it('should send every retry with the deadline of the whole call, not a fresh one', async () => {
    script = (n) => (n < 4 ? { code: status.UNAVAILABLE } : { response: { found: false } });
    const client = createCacheClient({ address, retries: 5, deadlineMs: 3000 });
    await client.remove('k');
    expect(attempts.length).toBe(4);
    const first = attempts[0]!.deadline;
    // The wire carries a relative grpc-timeout; the server turns it back into an instant, so the
    // instants agree to within the transit time (a fresh deadline per attempt would move by the backoff).
    for (const attempt of attempts) expect(Math.abs(attempt.deadline - first)).toBeLessThan(40);
    client.close();
  });

  it('should stop retrying when the next backoff would end after the deadline', async () => {
    script = () => ({ code: status.UNAVAILABLE });
    // Backoffs are 50, 100, 200, 400 ms…: a 250 ms deadline leaves room for at most three attempts.
    const client = createCacheClient({ address, retries: 10, deadlineMs: 250 });
    const err = await failure(client.get('k'));
    expect(err.status).toBe(503);
    expect(attempts.length).toBeGreaterThanOrEqual(1);
    expect(attempts.length).toBeLessThanOrEqual(3);
    client.close();
  });
});

describe('cache client setIfAbsent after a retry', () => {
  it('should report stored when the retry finds exactly the bytes its own first attempt stored', async () => {
    // The first attempt is applied, but its answer is lost: the retry meets its own value.
    script = (n, request) => {
      const { key, value } = request as CacheRequest__Output;
      if (n === 1) {
        store.set(key, value);
        return { code: status.UNAVAILABLE };
      }
      return { response: { found: true, value: store.get(key)! } };
    };
    const client = createCacheClient<string>({ address, retries: 2, deadlineMs: 5000 }, stringSerializer);
    await expect(client.setIfAbsent('claim', 'mine')).resolves.toEqual({ stored: true });
    client.close();
  });

  it('should report the live value when the retry finds another writer\'s bytes', async () => {
    script = (n) => (n === 1 ? { code: status.UNAVAILABLE } : { response: { found: true, value: Buffer.from('theirs') } });
    const client = createCacheClient<string>({ address, retries: 2, deadlineMs: 5000 }, stringSerializer);
    await expect(client.setIfAbsent('claim', 'mine')).resolves.toEqual({ stored: false, value: 'theirs' });
    client.close();
  });

  it('should not take a first-attempt found for its own value, even with equal bytes', async () => {
    script = () => ({ response: { found: true, value: Buffer.from('same') } });
    const client = createCacheClient<string>({ address }, stringSerializer);
    await expect(client.setIfAbsent('claim', 'same')).resolves.toEqual({ stored: false, value: 'same' });
    client.close();
  });
});

describe('cache client serializers', () => {
  /** A service that stores what it is sent, so a value makes the full trip: serialize, wire, deserialize. */
  function echoStore(): void {
    script = (_n, request) => {
      const { key, value } = request as CacheRequest__Output;
      const method = attempts.at(-1)!.method;
      if (method === 'Set') store.set(key, value);
      return store.has(key) ? { response: { found: true, value: store.get(key)! } } : { response: { found: false } };
    };
  }

  it('should round-trip JSON values and send them as UTF-8 JSON', async () => {
    echoStore();
    const client = createCacheClient({ address }, jsonSerializer);
    const value = { name: 'Zoë', amounts: [1, 2.5, -3], nested: { ok: true, none: null } };
    await client.set('json', value);
    expect(store.get('json')!.toString('utf8')).toBe(JSON.stringify(value));
    await expect(client.get('json')).resolves.toEqual(value);
    client.close();
  });

  it('should send strings as their UTF-8 bytes, untouched', async () => {
    echoStore();
    const client = createCacheClient<string>({ address }, stringSerializer);
    await client.set('text', 'ünïcode ✓ "quoted"');
    expect(store.get('text')).toEqual(Buffer.from('ünïcode ✓ "quoted"', 'utf8'));
    await expect(client.get('text')).resolves.toBe('ünïcode ✓ "quoted"');
    client.close();
  });

  it('should pass buffers through byte for byte, zero bytes and invalid UTF-8 included', async () => {
    echoStore();
    const client = createCacheClient<Buffer>({ address }, bufferSerializer);
    const bytes = Buffer.from([0, 255, 0xc3, 0x28, 10, 0]);
    await client.set('bin', bytes);
    expect(await client.get('bin')).toEqual(bytes);
    client.close();
  });

  it('should use a custom serializer both ways', async () => {
    echoStore();
    const dates: Serializer<Date> = { serialize: (d) => Buffer.from(String(d.getTime())), deserialize: (b) => new Date(Number(b.toString())) };
    const client = createCacheClient<Date>({ address }, dates);
    const when = new Date('2026-11-23T12:00:00Z');
    await client.set('when', when);
    expect(store.get('when')!.toString()).toBe(String(when.getTime()));
    await expect(client.get('when')).resolves.toEqual(when);
    client.close();
  });

  it('should reject, not return garbage, when a JSON client reads bytes that are not JSON', async () => {
    echoStore();
    store.set('plain', Buffer.from('not json'));
    const client = createCacheClient({ address }, jsonSerializer);
    await expect(client.get('plain')).rejects.toThrow(SyntaxError);
    client.close();
  });
});

describe('cache client counters', () => {
  it('should send delta and ttl and resolve with the counter and its expiry', async () => {
    script = () => ({ response: { value: 5, expiresAtUnixMs: 1_790_000_000_000 } });
    const client = createCacheClient({ address });
    await expect(client.increment('hits:today', 3, 60_000)).resolves.toEqual({ value: 5, expiresAtUnixMs: 1_790_000_000_000 });
    expect(attempts[0]!.request).toEqual({ key: 'hits:today', delta: 3, ttlMs: 60_000 });
    client.close();
  });
});

describe('cache client coalescing against a service without GetMany (contract 1.1)', () => {
  it('should answer concurrent gets with one Get each', async () => {
    script = (_n, request) => ({ response: { found: true, value: Buffer.from(JSON.stringify(`value of ${'key' in request ? request.key : ''}`)) } });
    const client = createCacheClient({ address });
    await expect(Promise.all([client.get('a'), client.get('b')])).resolves.toEqual(['value of a', 'value of b']);
    await expect(Promise.all([client.get('c'), client.get('d')])).resolves.toEqual(['value of c', 'value of d']);
    expect(attempts.map((a) => a.method)).toEqual(['Get', 'Get', 'Get', 'Get']);
    client.close();
  });
});

describe('cache client coalescing of one key (contract 1.2)', () => {
  /** Each call as the service saw it: `Get a` or `GetMany a,b`. */
  const calls: string[] = [];
  const values = new Map([
    ['a', 'value of a'],
    ['b', 'value of b'],
  ]);
  /** While set, a Get waits for it before answering (a read the test keeps in flight). */
  let hold: Promise<void> | undefined;
  const found = (key: string): CacheResponse => ({ found: values.has(key), value: Buffer.from(JSON.stringify(values.get(key) ?? null)) });
  let batching: Server;
  let batchingAddress: string;

  beforeAll(async () => {
    batching = new Server();
    batching.addService(cacheServiceDefinition(), {
      Get: (call: ServerUnaryCall<CacheRequest__Output, CacheResponse>, callback: sendUnaryData<CacheResponse>) => {
        calls.push(`Get ${call.request.key}`);
        const answer = found(call.request.key);
        void (hold ?? Promise.resolve()).then(() => callback(null, answer));
      },
      GetMany: (call: ServerUnaryCall<GetManyRequest__Output, GetManyResponse>, callback: sendUnaryData<GetManyResponse>) => {
        calls.push(`GetMany ${call.request.keys.join(',')}`);
        callback(null, { entries: call.request.keys.map(found) });
      },
    });
    const port = await new Promise<number>((resolve, reject) => batching.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (err, p) => (err ? reject(err) : resolve(p))));
    batchingAddress = `127.0.0.1:${port}`;
  });

  afterAll(() => batching.forceShutdown());

  afterEach(() => {
    calls.length = 0;
    values.set('a', 'value of a');
    hold = undefined;
  });

  it('should send a key once for all the gets of it made in one turn, each caller getting its value', async () => {
    const client = createCacheClient({ address: batchingAddress });
    await expect(Promise.all([client.get('a'), client.get('b'), client.get('a'), client.get('c'), client.get('a')])).resolves.toEqual(['value of a', 'value of b', 'value of a', undefined, 'value of a']);
    await expect(Promise.all([client.get('a'), client.get('a')])).resolves.toEqual(['value of a', 'value of a']);
    expect(calls).toEqual(['GetMany a,b,c', 'Get a']);
    client.close();
  });

  it('should never hand a get the answer of a read that left before the get was made', async () => {
    const client = createCacheClient({ address: batchingAddress });
    let release!: () => void;
    hold = new Promise((resolve) => (release = resolve));
    const before = client.get('a');
    while (calls.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    // The first read has left with the old value; the key changes; a new get must read again.
    values.set('a', 'changed');
    const after = client.get('a');
    while (calls.length === 1) await new Promise((resolve) => setTimeout(resolve, 5));
    release();
    await expect(before).resolves.toBe('value of a');
    await expect(after).resolves.toBe('changed');
    expect(calls).toEqual(['Get a', 'Get a']);
    client.close();
  });
});
