import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Agent, request as httpRequest } from 'node:http';
import type { Redis } from 'ioredis';
import { API_KEY, client, startRegistryOnPrivateRedis, withRegistryProcess, type Client, type RegistryOnRedis, type RunningRegistry } from './support/registry-fixture.js';
import { send } from './support/http-client.js';
import { UNUSABLE_SCHEMAS } from './support/unusable-schemas.js';
import { longestSilenceShare, lookupsDuring } from './support/lookups.js';
import { HANG_GUARD_MS, whileProgressing } from '../../../test/support/progress.js';

/**
 * An answer's status and raw body chunks, unparsed: for as long as it takes while bytes keep
 * arriving (a 10 MB listing on a busy machine), failing once none came for STALL_MS.
 */
function collect(baseUrl: string, path: string): Promise<{ status: number; chunks: Buffer[] }> {
  const chunks: Buffer[] = [];
  return whileProgressing(`GET ${path}`, { progress: () => chunks.length }, (signal) => new Promise((resolve, reject) => {
    const req = httpRequest(`${baseUrl}${path}`, { headers: { 'x-api-key': API_KEY }, signal }, (res) => {
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.once('end', () => resolve({ status: res.statusCode ?? 0, chunks }));
      res.once('error', reject);
    });
    req.once('error', reject);
    req.end();
  }));
}

const VALID_SDL = 'type Query {\n  orders: [Order!]!\n}\n\ntype Order {\n  id: ID!\n  total: Float\n}\n';

describe('graph registry API over a real Redis', () => {
  let running: RegistryOnRedis;
  let direct: Redis;
  let registry: RunningRegistry;
  let api: Client;

  beforeAll(async () => {
    running = await startRegistryOnPrivateRedis();
    ({ direct, registry, api } = running);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await running.close();
  });

  beforeEach(async () => {
    await direct.flushdb();
  });

  describe('health', () => {
    it('should answer GET /health with 200 {"status":"ok"} without a key', async () => {
      const res = await client(registry.baseUrl, null).get('/health');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ status: 'ok' });
    });

    it('should answer GET /health with a wrong key too, since the key is not looked at', async () => {
      expect((await client(registry.baseUrl, 'wrong').get('/health')).status).toBe(200);
    });
  });

  describe('graphs', () => {
    it('should register a URL and return it as text/plain', async () => {
      const post = await api.registerGraph('orders', 'http://orders.shop.svc.cluster.local:4000/graphql');
      expect(post.status).toBe(204);
      expect(post.text).toBe('');
      const get = await api.get('/orders');
      expect(get.status).toBe(200);
      expect(get.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(get.text).toBe('http://orders.shop.svc.cluster.local:4000/graphql');
    });

    it('should keep the record at graph:{name} exactly, with the URL as plain text', async () => {
      await api.registerGraph('users.v2', 'https://users.example.com/graphql');
      expect(await direct.keys('*')).toEqual(['graph:users.v2']);
      expect(await direct.get('graph:users.v2')).toBe('https://users.example.com/graphql');
    });

    it('should read a record written straight into Redis', async () => {
      await direct.set('graph:written-by-hand', 'http://hand.example.com/graphql');
      expect((await api.get('/written-by-hand')).text).toBe('http://hand.example.com/graphql');
    });

    it('should replace the URL of a name registered again', async () => {
      await api.registerGraph('orders', 'http://old.example.com/graphql');
      await api.registerGraph('orders', 'http://new.example.com/graphql');
      expect((await api.get('/orders')).text).toBe('http://new.example.com/graphql');
    });

    it('should drop surrounding whitespace such as a trailing newline and keep the URL otherwise as sent', async () => {
      await api.registerGraph('trimmed', '  HTTPS://Example.COM:8443/Graph?x=1#f\r\n');
      expect((await api.get('/trimmed')).text).toBe('HTTPS://Example.COM:8443/Graph?x=1#f');
    });

    it('should accept a text/plain content type with a charset parameter', async () => {
      const res = await api.post('POST', '/charset', 'http://a.example.com/', 'text/plain; charset=utf-8');
      expect(res.status).toBe(204);
    });

    it('should answer 404 {"error":"not found"} for an unknown name', async () => {
      const res = await api.get('/unknown');
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'not found' });
    });

    it('should delete a graph with 204, then answer 404 for it', async () => {
      await api.registerGraph('gone', 'http://gone.example.com/graphql');
      const first = await api.delete('/gone');
      expect(first.status).toBe(204);
      expect(first.text).toBe('');
      expect(await direct.exists('graph:gone')).toBe(0);
      expect((await api.get('/gone')).status).toBe(404);
      const second = await api.delete('/gone');
      expect(second.status).toBe(404);
      expect(second.json).toEqual({ error: 'not found' });
    });

    it('should answer HEAD like GET without a body', async () => {
      await api.registerGraph('headed', 'http://headed.example.com/graphql');
      const res = await api.send({ method: 'HEAD', path: '/headed' });
      expect(res.status).toBe(200);
      expect(res.text).toBe('');
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
    });

    it.each([
      ['one character', '0'],
      ['63 characters', `a${'b'.repeat(62)}`],
      ['dots, dashes and underscores', 'a.b-c_d'],
      ['a trailing dot', 'z.'],
    ])('should accept a name with %s', async (_case, name) => {
      expect((await api.registerGraph(name, 'http://x.example.com/')).status).toBe(204);
      expect((await api.get(`/${name}`)).status).toBe(200);
      expect((await api.delete(`/${name}`)).status).toBe(204);
    });
  });

  describe('list', () => {
    it('should answer {"graphs":{}} when nothing is registered', async () => {
      const res = await api.get('/');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({ graphs: {} });
    });

    it('should list every graph by name in ascending order, without the schema or foreign keys', async () => {
      await api.registerGraph('users', 'http://users.example.com/graphql');
      await api.registerGraph('orders', 'http://orders.example.com/graphql');
      await api.storeSchema(VALID_SDL);
      await direct.set('graph:Not-A-Name', 'http://ignored.example.com/');
      await direct.set('other:orders', 'http://ignored.example.com/');
      await direct.hset('graph:a-hash', 'field', 'value');
      const res = await api.get('/');
      expect(res.json).toEqual({ graphs: { orders: 'http://orders.example.com/graphql', users: 'http://users.example.com/graphql' } });
      expect(Object.keys((res.json as { graphs: object }).graphs)).toEqual(['orders', 'users']);
    });

    it('should list thousands of graphs (SCAN over several batches)', async () => {
      const pipeline = direct.pipeline();
      for (let i = 0; i < 2500; i += 1) pipeline.set(`graph:g${String(i).padStart(4, '0')}`, `http://g${i}.example.com/graphql`);
      await pipeline.exec();
      const graphs = (await api.get('/')).json as { graphs: Record<string, string> };
      expect(Object.keys(graphs.graphs)).toHaveLength(2500);
      expect(graphs.graphs.g1234).toBe('http://g1234.example.com/graphql');
    });

    it("should list 20 000 graphs of 512-byte URLs a page at a time, answering other callers' lookups all the while", async () => {
      const count = 20_000;
      const urlOf = (i: number): string => `http://g${i}.example.com/${'p'.repeat(512)}`;
      for (let start = 0; start < count; start += 1000) {
        const pipeline = direct.pipeline();
        for (let i = start; i < start + 1000; i += 1) pipeline.set(`graph:g${String(i).padStart(5, '0')}`, urlOf(i));
        await pipeline.exec();
      }
      await api.registerGraph('orders', 'http://orders.example.com/graphql');
      // The registry watched runs in a process of its own, as in production, and the 10 MB
      // answer is only collected while the lookups run, parsed after: the test process's own
      // work (and its heap after a hundred suites) must not be what holds the lookups.
      const during = await withRegistryProcess(running.redisUrl, (baseUrl) => lookupsDuring(baseUrl, API_KEY, () => collect(baseUrl, '/')));
      const { result } = during;
      expect(result.status).toBe(200);
      const graphs = (JSON.parse(Buffer.concat(result.chunks).toString('utf8')) as { graphs: Record<string, string> }).graphs;
      expect(Object.keys(graphs)).toHaveLength(count + 1);
      expect(Object.keys(graphs)[0]).toBe('g00000');
      expect(graphs.g12345).toBe(urlOf(12345));
      // Every lookup answered 200 (lookupsDuring), and none of the listing went by without one: a
      // listing built in one go holds the event loop for most of its run. The speed targets (their
      // p99 under 100 ms, none a second) are make bench's (bench/worst-request.bench.ts).
      process.stdout.write(`listing of ${count + 1} graphs: ${(during.endedAt - during.startedAt).toFixed(0)} ms, ${during.lookups.length} lookups, longest silence ${(100 * longestSilenceShare(during)).toFixed(1)} % of it\n`);
      expect(longestSilenceShare(during)).toBeLessThan(0.5);
    }, HANG_GUARD_MS);
  });

  describe('invalid names', () => {
    const badNames = [
      ['uppercase', 'Orders'],
      ['a leading dash', '-orders'],
      ['a leading dot', '.orders'],
      ['64 characters', 'a'.repeat(64)],
      ['an encoded space', 'my%20graph'],
      ['an encoded slash', 'a%2Fb'],
      ['a colon', 'a:b'],
      ['non-ASCII letters', encodeURIComponent('graphé')],
      ['an invalid percent sequence', '%E0%A4%A'],
      ['the reserved name schema, percent-encoded', '%73chema'],
      ['the reserved name health, percent-encoded', '%68ealth'],
    ];

    it.each(badNames)('should answer 400 to GET, POST and DELETE for a name with %s', async (_case, name) => {
      for (const res of [await api.get(`/${name}`), await api.registerGraph(name, 'http://x.example.com/'), await api.delete(`/${name}`)]) {
        expect(res.status).toBe(400);
        expect((res.json as { error: string }).error).toMatch(/^invalid name/);
      }
      expect(await direct.dbsize()).toBe(0);
    });

    it('should say why a reserved name is refused', async () => {
      expect((await api.get('/%73chema')).json).toEqual({ error: 'invalid name: "schema" is reserved' });
    });

    it('should check the name before the body', async () => {
      const res = await api.post('POST', '/Bad', '{}', 'application/json');
      expect(res.status).toBe(400);
    });
  });

  describe('invalid URLs', () => {
    it.each([
      ['a sentence', 'not a url'],
      ['a relative path', '/relative/graphql'],
      ['a host without scheme', 'example.com/graphql'],
      ['a protocol-relative reference', '//example.com/graphql'],
      ['javascript:', 'javascript:alert(1)'],
      ['javascript: disguised with a fake path', 'javascript://example.com/%0Aalert(1)'],
      ['ftp:', 'ftp://example.com/graphql'],
      ['file:', 'file:///etc/passwd'],
      ['data:', 'data:text/plain,hello'],
      ['mailto:', 'mailto:ops@example.com'],
      ['a scheme without slashes', 'http:example.com'],
      ['no host', 'http://'],
      ['an invalid port', 'http://example.com:99999/'],
      ['a space inside', 'http://exa mple.com/graphql'],
      ['a tab inside', 'http://example.com/\tgraphql'],
      ['a newline inside', 'http://example.com/\ngraphql'],
      ['two URLs', 'http://a.example.com/ http://b.example.com/'],
      ['an empty body', ''],
      ['only whitespace', '  \n'],
      ['JSON', '{"url":"http://example.com/"}'],
    ])('should answer 400 for %s and store nothing', async (_case, body) => {
      const res = await api.registerGraph('orders', body);
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: 'body must be an absolute http or https URL' });
      expect(await direct.exists('graph:orders')).toBe(0);
    });

    it('should answer 400 for a body that is not UTF-8', async () => {
      const res = await api.post('POST', '/orders', Buffer.from([0x68, 0x74, 0x74, 0x70, 0xff, 0xfe]));
      expect(res.status).toBe(400);
      expect(res.json).toEqual({ error: 'body must be UTF-8 text' });
    });
  });

  describe('media types', () => {
    it.each([['application/json'], ['text/html'], ['application/graphql'], ['application/x-www-form-urlencoded'], ['application/octet-stream']])(
      'should answer 415 to POST /{name} with %s',
      async (contentType) => {
        const res = await api.post('POST', '/orders', 'http://x.example.com/', contentType);
        expect(res.status).toBe(415);
        expect(res.json).toEqual({ error: 'content type must be one of: text/plain' });
      },
    );

    it('should answer 415 to a body without a content type', async () => {
      const res = await api.send({ method: 'POST', path: '/orders', body: 'http://x.example.com/' });
      expect(res.status).toBe(415);
    });

    it('should answer 415 to a POST without any body', async () => {
      expect((await api.send({ method: 'POST', path: '/orders' })).status).toBe(415);
      expect((await api.send({ method: 'POST', path: '/schema' })).status).toBe(415);
    });

    it.each([['application/json'], ['text/html'], ['application/octet-stream']])('should answer 415 to POST /schema with %s', async (contentType) => {
      const res = await api.storeSchema(VALID_SDL, contentType);
      expect(res.status).toBe(415);
      expect(res.json).toEqual({ error: 'content type must be one of: text/plain, application/graphql' });
    });
  });

  describe('size limits', () => {
    const urlOfBytes = (bytes: number): string => {
      const head = 'http://big.example.com/?q=';
      return head + 'a'.repeat(bytes - head.length);
    };

    it('should accept a URL body of exactly 64 KiB', async () => {
      expect((await api.registerGraph('big', urlOfBytes(64 * 1024))).status).toBe(204);
      expect((await api.get('/big')).text).toHaveLength(64 * 1024);
    });

    it('should answer 413 to a URL body one byte over 64 KiB, declared or streamed', async () => {
      const declared = await api.registerGraph('big', urlOfBytes(64 * 1024 + 1));
      expect(declared.status).toBe(413);
      expect(declared.json).toEqual({ error: 'body exceeds 65536 bytes' });
      const streamed = await api.send({ method: 'POST', path: '/big', headers: { 'content-type': 'text/plain' }, body: urlOfBytes(64 * 1024 + 1), chunked: true });
      expect(streamed.status).toBe(413);
      expect(await direct.exists('graph:big')).toBe(0);
    });

    const schemaOfBytes = (bytes: number): string => {
      const head = 'type Query {\n  a: String\n}\n#';
      return head + 'x'.repeat(bytes - head.length);
    };

    it('should accept a schema of exactly 1 MiB', async () => {
      expect((await api.storeSchema(schemaOfBytes(1024 * 1024))).status).toBe(201);
      expect(await direct.strlen('graph:schema')).toBe(1024 * 1024);
    });

    it('should answer 413 to a schema one byte over 1 MiB, declared or streamed', async () => {
      const declared = await api.storeSchema(schemaOfBytes(1024 * 1024 + 1));
      expect(declared.status).toBe(413);
      expect(declared.json).toEqual({ error: 'body exceeds 1048576 bytes' });
      const streamed = await api.send({ method: 'POST', path: '/schema', headers: { 'content-type': 'text/plain' }, body: schemaOfBytes(4 * 1024 * 1024), chunked: true });
      expect(streamed.status).toBe(413);
      expect(await direct.exists('graph:schema')).toBe(0);
    });

    it('should keep a keep-alive connection usable after refusing a body mid-stream', async () => {
      const agent = new Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const refused = await api.send({ method: 'POST', path: '/schema', headers: { 'content-type': 'text/plain' }, body: schemaOfBytes(8 * 1024 * 1024), chunked: true, agent, timeoutMs: 20_000 });
        expect(refused.status).toBe(413);
        const next = await api.send({ method: 'GET', path: '/health', agent, timeoutMs: 2000 });
        expect(next.status).toBe(200);
      } finally {
        agent.destroy();
      }
    });

    it('should check the media type before the size', async () => {
      expect((await api.post('POST', '/big', urlOfBytes(128 * 1024), 'application/json')).status).toBe(415);
    });
  });

  describe('schema', () => {
    it('should answer 404 {"error":"not found"} when no schema is stored', async () => {
      const res = await api.get('/schema');
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'not found' });
    });

    it.each([['application/graphql'], ['text/plain'], ['text/plain; charset=utf-8']])('should store a valid schema sent as %s and return it unchanged', async (contentType) => {
      const res = await api.storeSchema(VALID_SDL, contentType);
      expect(res.status).toBe(201);
      const get = await api.get('/schema');
      expect(get.status).toBe(200);
      expect(get.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(get.text).toBe(VALID_SDL);
      expect(await direct.get('graph:schema')).toBe(VALID_SDL);
      // The specification's record, and the history beside it in the same cluster slot.
      expect((await direct.keys('*')).sort()).toEqual(['graph:schema', '{graph:schema}:info', '{graph:schema}:reports', '{graph:schema}:sdl', '{graph:schema}:state', '{graph:schema}:versions']);
    });

    it('should accept schema extensions, directives, descriptions and unicode', async () => {
      const sdl = '"""Ünïcödé ✓"""\ndirective @auth(role: String) on FIELD_DEFINITION\ntype Query { me: User @auth(role: "client") }\ntype User { id: ID! }\nextend type User { name: String }\n';
      expect((await api.storeSchema(sdl)).status).toBe(201);
      expect((await api.get('/schema')).text).toBe(sdl);
    });

    it('should replace the stored schema', async () => {
      await api.storeSchema(VALID_SDL);
      await api.storeSchema('type Query { replaced: Boolean }');
      expect((await api.get('/schema')).text).toBe('type Query { replaced: Boolean }');
    });

    it('should refuse a syntax error with the parser message, line and column', async () => {
      const res = await api.storeSchema('type Query {\n  a: String\n');
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        error: 'Syntax Error: Expected Name, found <EOF>.',
        locations: [{ line: 3, column: 1 }],
        problems: [{ message: 'Syntax Error: Expected Name, found <EOF>.', locations: [{ line: 3, column: 1 }] }],
      });
      expect(await direct.exists('graph:schema')).toBe(0);
    });

    it('should refuse an unknown type and list every problem with its location', async () => {
      const res = await api.storeSchema('type Query {\n  order: Order\n}\ntype Query {\n  b: Int\n}\n');
      expect(res.status).toBe(400);
      expect(res.json).toEqual({
        error: 'Unknown type "Order".',
        locations: [{ line: 2, column: 10 }],
        problems: [
          { message: 'Unknown type "Order".', locations: [{ line: 2, column: 10 }] },
          { message: 'There can be only one type named "Query".', locations: [{ line: 1, column: 6 }, { line: 4, column: 6 }] },
        ],
      });
    });

    it('should refuse an unknown directive with its location', async () => {
      const res = await api.storeSchema('type Query {\n  a: Int @cached\n}');
      expect(res.json).toMatchObject({ error: 'Unknown directive "@cached".', locations: [{ line: 2, column: 10 }] });
    });

    it.each(UNUSABLE_SCHEMAS)('should refuse a schema clients cannot use (%s) with 400 and the message, and store nothing', async (_case, sdl, first) => {
      const res = await api.storeSchema(sdl);
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ error: first.message, locations: first.locations });
      expect((res.json as { problems: unknown[] }).problems[0]).toEqual(first);
      expect(await direct.exists('graph:schema')).toBe(0);
    });

    it('should refuse an operation, which is not a schema', async () => {
      const res = await api.storeSchema('type Query { a: Int }\n\nquery { a }');
      expect(res.status).toBe(400);
      expect(res.json).toMatchObject({ locations: [{ line: 3, column: 1 }] });
      expect((res.json as { error: string }).error).toMatch(/only contain type system definitions/);
    });

    it('should refuse an empty schema', async () => {
      const res = await api.storeSchema('');
      expect(res.json).toMatchObject({ error: 'Syntax Error: Unexpected <EOF>.', locations: [{ line: 1, column: 1 }] });
    });

    it('should refuse absurdly nested type references with 400, not a crash', async () => {
      const depth = 200_000;
      const res = await api.storeSchema(`type Query { a: ${'['.repeat(depth)}Int${']'.repeat(depth)} }`);
      expect(res.status).toBe(400);
    });

    it('should answer 400 for a schema that is not UTF-8', async () => {
      const res = await api.post('POST', '/schema', Buffer.from([0xc3, 0x28]), 'application/graphql');
      expect(res.json).toEqual({ error: 'body must be UTF-8 text' });
    });
  });

  describe('methods and paths', () => {
    it.each([
      ['PUT', '/orders', 'GET, HEAD, POST, DELETE'],
      ['PATCH', '/orders', 'GET, HEAD, POST, DELETE'],
      ['OPTIONS', '/orders', 'GET, HEAD, POST, DELETE'],
      ['DELETE', '/schema', 'GET, HEAD, POST'],
      ['PUT', '/schema', 'GET, HEAD, POST'],
      ['POST', '/', 'GET, HEAD'],
      ['DELETE', '/', 'GET, HEAD'],
    ])('should answer 405 to %s %s with Allow: %s', async (method, path, allow) => {
      const res = await api.send({ method, path });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe(allow);
      expect(res.json).toEqual({ error: 'method not allowed' });
    });

    it('should answer 405 to POST /health without a key', async () => {
      const res = await client(registry.baseUrl, null).send({ method: 'POST', path: '/health', headers: { 'content-type': 'text/plain' }, body: 'x' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET, HEAD');
    });

    it('should treat paths case-sensitively: /SCHEMA is an invalid name and /HEALTH needs a key', async () => {
      expect((await api.get('/SCHEMA')).json).toEqual({ error: 'invalid name: must match ^[a-z0-9]([a-z0-9._-]{0,62})$' });
      expect((await client(registry.baseUrl, null).get('/HEALTH')).status).toBe(401);
    });

    it('should accept a trailing slash after a name', async () => {
      await api.registerGraph('slashed', 'http://slashed.example.com/');
      expect((await api.get('/slashed/')).text).toBe('http://slashed.example.com/');
    });

    it('should answer 404 to a path of more than one segment', async () => {
      const res = await api.get('/orders/extra');
      expect(res.status).toBe(404);
      expect(res.json).toEqual({ error: 'not found' });
    });
  });

  describe('operations', () => {
    it('should report the number of graphs and the schema size in its metrics', async () => {
      await api.registerGraph('a', 'http://a.example.com/');
      await api.registerGraph('b', 'http://b.example.com/');
      await api.storeSchema(VALID_SDL);
      const text = await registry.registry.metrics();
      expect(text).toContain('graph_registry_graphs{service="graph-registry"} 2');
      expect(text).toContain(`graph_registry_schema_bytes{service="graph-registry"} ${Buffer.byteLength(VALID_SDL)}`);
      expect(text).toMatch(/http_requests_total\{method="POST",route="\/:name",status="204",service="graph-registry"\} [1-9]/);
      expect(text).toMatch(/http_request_duration_seconds_count\{service="graph-registry",method="POST",route="\/schema",status="201"\} [1-9]/);
    });

    it('should serve /metrics and a ready /readyz naming the store on the management port', async () => {
      const ready = await send(registry.managementUrl, { method: 'GET', path: '/readyz' });
      expect(ready.status).toBe(200);
      expect(ready.json).toEqual({ status: 'ok', failing: [], checks: { redis: 'ok' } });
      const metrics = await send(registry.managementUrl, { method: 'GET', path: '/metrics' });
      expect(metrics.text).toContain('graph_registry_graphs');
    });
  });
});
