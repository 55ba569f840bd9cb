import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { send, type RawRequest } from './support/http-client.js';
import { assertDocumented } from './support/openapi-contract.js';
import { API_KEY, ROTATED_API_KEY, client, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

/** Printable ASCII: what an HTTP header value or a raw path may carry without the client refusing it. */
const printable = (maxLength: number) => fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength });
const rawPathChars = (maxLength: number) =>
  fc.string({ unit: fc.constantFrom(...'abcz09.-_~%AZ:@!$&()*+,;='.split('')), minLength: 1, maxLength });

const path = fc.oneof(
  fc.constantFrom('/', '/health', '/schema', '/orders', '/orders/', '/a/b', '/%73chema', '/%68ealth', '/%', '/%zz', '/%E0%A4%A', '/a%2Fb'),
  fc.stringMatching(/^[a-z0-9][a-z0-9._-]{0,70}$/).map((name) => `/${name}`),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 80 }).map((name) => `/${encodeURIComponent(name)}`),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 40 }).map((name) => `/${encodeURIComponent(name)}`),
  rawPathChars(100).map((raw) => `/${raw}`),
  fc.integer({ min: 64, max: 4000 }).map((length) => `/${'a'.repeat(length)}`),
);

const apiKey = fc.oneof(fc.constant(API_KEY), fc.constant(ROTATED_API_KEY), fc.constant(undefined), printable(80));

const contentType = fc.oneof(
  fc.constantFrom(undefined, 'text/plain', 'text/plain; charset=utf-8', 'application/graphql', 'application/json', 'text/html', 'multipart/form-data; boundary=x', 'text/plain; charset=latin1', ';;', 'text/'),
  printable(60),
);

const body = fc.oneof(
  fc.constant(undefined),
  fc.webUrl(),
  fc.constantFrom('javascript:alert(1)', '/relative', 'http://', 'http://a b', 'type Query { a: Int }', 'type Query {', 'query { a }', ''),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.uint8Array({ maxLength: 300 }).map((bytes) => Buffer.from(bytes)),
  fc.integer({ min: 60 * 1024, max: 70 * 1024 }).map((length) => `http://big.example.com/${'a'.repeat(length)}`),
);

const request = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS'),
  path,
  apiKey,
  contentType,
  body,
  chunked: fc.boolean(),
});

type Generated = typeof request extends fc.Arbitrary<infer T> ? T : never;

function toRawRequest(generated: Generated): RawRequest {
  const headers: Record<string, string> = {};
  if (generated.apiKey !== undefined) headers['x-api-key'] = generated.apiKey;
  if (generated.contentType !== undefined) headers['content-type'] = generated.contentType;
  return {
    method: generated.method,
    path: generated.path,
    headers,
    ...(generated.body === undefined ? {} : { body: generated.body, chunked: generated.chunked }),
    timeoutMs: 3000,
  };
}

describe('graph registry under random requests', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await redis.stop();
  });

  it('should never answer 5xx or hang, and answer only what openapi.yaml documents', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (generated) => {
        const raw = toRawRequest(generated);
        const res = await send(registry.baseUrl, raw);
        expect(res.status).toBeLessThan(500);
        assertDocumented(raw.method, raw.path, res);
        if (raw.method === 'POST' && res.status === 204 && raw.path !== '/schema') {
          // A stored URL reads back as sent, less surrounding whitespace.
          const stored = await client(registry.baseUrl).get(raw.path);
          expect(stored.text).toBe(Buffer.from(raw.body!).toString('utf8').trim());
        }
      }),
      { numRuns: 1000 },
    );
    expect((await client(registry.baseUrl).get('/health')).status).toBe(200);
  }, 60_000);
});
