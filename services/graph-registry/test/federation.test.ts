import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildSchema, findBreakingChanges, parse, validate } from 'graphql';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { subgraphSdl } from '../../../test/support/subgraph-fixtures.js';
import { gatewayContractSdl } from '../../../test/support/graphql-gateway.js';
import { send } from './support/http-client.js';
import { API_KEY, client, startRegistry, type Client, type RunningRegistry } from './support/registry-fixture.js';

/**
 * Subgraph schemas, composition and the supergraph's CDN artifacts against a real Redis, with the
 * specification's user, product and payment subgraphs (test/support/subgraphs). Every answer of
 * the API is checked against openapi.yaml by the test client.
 */

const CDN_KEY = 'cdn-read-only-key-0123456789';
const ROTATED_CDN_KEY = 'cdn-read-only-key-next-987654';

let redis: PrivateRedis;
let registry: RunningRegistry;
let api: Client;

const publish = (name: string, sdl: string, query = '', headers: Record<string, string> = {}) =>
  api.send({ method: 'POST', path: `/${name}/schema${query}`, headers: { 'content-type': 'application/graphql', ...headers }, body: sdl });
const artifact = (path: string, headers: Record<string, string> = {}) => send(registry.baseUrl, { method: 'GET', path: `/artifacts/v1/${path}`, headers });

/** The payment subgraph with `Client.number` as a String: the user subgraph has it as Int!. */
const conflictingType = subgraphSdl('payment').replace('planSubscriptions: [PlanSubscription!]!', 'planSubscriptions: [PlanSubscription!]!\n  number: String');
/** The product subgraph keyed by a field it does not have. */
const missingKeyField = subgraphSdl('product').replace('type Plan @key(fields: "id")', 'type Plan @key(fields: "sku")');

beforeAll(async () => {
  redis = await startPrivateRedis();
  registry = await startRegistry({ kind: 'redis', url: redis.url }, [API_KEY], { cdn: { keys: [CDN_KEY, ROTATED_CDN_KEY], target: 'platform' } });
  api = client(registry.baseUrl);
  for (const name of ['user', 'product', 'payment']) await api.registerGraph(name, `http://${name}.shop.svc.cluster.local:4000/graphql`);
}, 60_000);

afterAll(async () => {
  await registry?.close();
  await redis?.stop();
});

describe('subgraph schemas and the supergraph', () => {
  it('should refuse the schema of a graph that is not registered (404) and store nothing', async () => {
    const res = await publish('unknown', subgraphSdl('user'));
    expect(res.status).toBe(404);
    expect((await api.get('/supergraph')).status).toBe(404);
  });

  it('should compose the three subgraphs into supergraph versions 1, 2, 3, each naming the subgraph versions it was made from', async () => {
    for (const [index, name] of ['user', 'product', 'payment'].entries()) {
      const res = await publish(name, subgraphSdl(name));
      expect(res.status).toBe(201);
      expect(res.headers.location).toBe(`/${name}/schema/versions/1`);
      expect((res.json as { supergraph: { version: number } }).supergraph.version).toBe(index + 1);
    }
    const latest = (await api.get('/supergraph/versions/3')).json as { subgraphs: Array<{ name: string; version: number; url: string }>; cause: object; previousVersion: number };
    expect(latest.subgraphs.map(({ name, version, url }) => [name, version, url])).toEqual([
      ['payment', 1, 'http://payment.shop.svc.cluster.local:4000/graphql'],
      ['product', 1, 'http://product.shop.svc.cluster.local:4000/graphql'],
      ['user', 1, 'http://user.shop.svc.cluster.local:4000/graphql'],
    ]);
    expect(latest).toMatchObject({ cause: { kind: 'publish', subgraph: 'payment' }, previousVersion: 2 });
  });

  it('should serve a public API that keeps every query and mutation of the webhooks contract', async () => {
    const api_ = await artifact('platform/sdl', { 'x-hive-cdn-key': CDN_KEY });
    expect(api_.status).toBe(200);
    const composed = buildSchema(api_.text);
    expect(findBreakingChanges(buildSchema(gatewayContractSdl), composed)).toEqual([]);
    const spanning = parse('{ clientByNumber(number: 1) { name planSubscriptions { checkoutSessionId plan { name active } } } }');
    expect(validate(composed, spanning)).toEqual([]);
  });

  it('should answer the newest version again with 200 and create nothing', async () => {
    const res = await publish('user', subgraphSdl('user'));
    expect(res.status).toBe(200);
    expect((await api.get('/supergraph/versions?limit=1')).json).toMatchObject({ versions: [{ version: 3 }] });
  });

  it('should refuse a conflicting field type with 409, each error with its message and coordinate, and store nothing', async () => {
    const res = await publish('payment', conflictingType);
    expect(res.status).toBe(409);
    const body = res.json as { errors: Array<{ code: string; coordinate: string; message: string }> };
    expect(body.errors).toContainEqual(expect.objectContaining({ code: 'FIELD_TYPE_MISMATCH', coordinate: 'Client.number', message: expect.stringContaining('"Int!" in subgraph "user"') }));
    expect((await api.get('/payment/schema/versions')).json).toMatchObject({ versions: [{ version: 1 }] });
    expect((await api.get('/supergraph/versions?limit=1')).json).toMatchObject({ versions: [{ version: 3 }] });
  });

  it('should refuse a @key on a field the type does not have (409 KEY_INVALID_FIELDS on the type), also as a dry run', async () => {
    for (const query of ['', '?dryRun=true']) {
      const res = await publish('product', missingKeyField, query);
      expect(res.status).toBe(409);
      expect((res.json as { errors: unknown[] }).errors).toContainEqual(expect.objectContaining({ code: 'KEY_INVALID_FIELDS', coordinate: 'Plan', subgraph: 'product' }));
    }
  });

  it('should answer a syntax error with 400 and its location', async () => {
    const res = await publish('user', 'type Query {');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ locations: [{ line: 1, column: 13 }] });
  });

  it('should report the public API changes of a subgraph version and answer a dry run without storing', async () => {
    const extended = subgraphSdl('user').replace('  name: String!\n', '  name: String!\n  "The client\'s website."\n  website: String\n');
    const dry = await publish('user', extended, '?dryRun=true');
    expect(dry.status).toBe(200);
    expect(dry.json).toMatchObject({ dryRun: true, baseVersion: 1, report: { changes: [{ class: 'safe', kind: 'FIELD_ADDED', coordinate: 'Client.website' }] } });
    const res = await publish('user', extended);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ version: { version: 2, previousVersion: 1 }, supergraph: { version: 4 } });
    const diff = await api.get('/user/schema/diff?from=1&to=2');
    expect(diff.json).toMatchObject({ report: { changes: [{ kind: 'FIELD_ADDED', coordinate: 'Client.website' }] } });
  });

  it('should roll a subgraph back as a new version and compose it again', async () => {
    const res = await api.send({ method: 'POST', path: '/user/schema/rollback', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ version: 1 }) });
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ version: { version: 3, rollbackOf: 1 }, report: { counts: { breaking: 1 } }, supergraph: { version: 5 } });
  });

  it('should compose again with a graph\'s new URL (its routing URL)', async () => {
    expect((await api.registerGraph('product', 'http://product-v2.shop.svc.cluster.local:4000/graphql')).status).toBe(204);
    const latest = (await api.get('/supergraph/versions/6')).json as { cause: object; subgraphs: Array<{ name: string; url: string }> };
    expect(latest.cause).toEqual({ kind: 'url', subgraph: 'product' });
    expect(latest.subgraphs.find((member) => member.name === 'product')?.url).toBe('http://product-v2.shop.svc.cluster.local:4000/graphql');
    expect((await artifact('platform/supergraph', { 'x-hive-cdn-key': CDN_KEY })).text).toContain('http://product-v2.shop.svc.cluster.local:4000/graphql');
  });
});

describe('removing a subgraph', () => {
  it('should compose the supergraph again without a removed graph and drop its subgraph history', async () => {
    // Without payment, user and product still compose; the removal recomposes and drops its history.
    const res = await api.delete('/payment');
    expect(res.status).toBe(204);
    expect((await api.get('/payment')).status).toBe(404);
    expect((await api.get('/payment/schema')).status).toBe(404);
    const latest = (await api.get('/supergraph/versions?limit=1')).json as { versions: Array<{ cause: object; subgraphs: Array<{ name: string }> }> };
    expect(latest.versions[0]!.cause).toEqual({ kind: 'remove', subgraph: 'payment' });
    expect(latest.versions[0]!.subgraphs.map((member) => member.name)).toEqual(['product', 'user']);
  });

  it('should refuse a removal that breaks the public API under reject-breaking, unless overridden', async () => {
    const strict = await startRegistry({ kind: 'redis', url: redis.url }, [API_KEY], { schemaPublishing: { policy: 'reject-breaking', keep: 100, topic: 'schema-changes' }, cdn: { keys: [CDN_KEY], target: 'platform' } });
    try {
      const strictApi = client(strict.baseUrl);
      const refused = await strictApi.send({ method: 'DELETE', path: '/product/schema' });
      expect(refused.status).toBe(409);
      expect((refused.json as { report: { counts: { breaking: number } } }).report.counts.breaking).toBeGreaterThan(0);
      expect((await strictApi.get('/product/schema')).status).toBe(200);
      const allowed = await strictApi.send({ method: 'DELETE', path: '/product/schema', headers: { 'x-allow-breaking-changes': 'true' } });
      expect(allowed.status).toBe(204);
      expect((await strictApi.get('/product')).status).toBe(200);
      expect((await strictApi.get('/product/schema')).status).toBe(404);
    } finally {
      await strict.close();
    }
  });
});

describe('the supergraph over Hive\'s CDN protocol', () => {
  it('should answer a missing key with 400 and a wrong key, the API key or another target with 403, revealing nothing', async () => {
    const missing = await artifact('platform/supergraph');
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ code: 'MISSING_AUTH_KEY' });
    for (const [path, key] of [['platform/supergraph', 'wrong'], ['platform/supergraph', API_KEY], ['other/supergraph', CDN_KEY]] as const) {
      const res = await artifact(path, { 'x-hive-cdn-key': key });
      expect(res.status).toBe(403);
      expect(res.json).toMatchObject({ code: 'INVALID_AUTH_KEY' });
      expect(res.text).not.toContain('schema');
      expect(res.headers.etag).toBeUndefined();
      expect(res.headers['x-hive-schema-version-id']).toBeUndefined();
    }
  });

  it('should not let a CDN key write or read the API', async () => {
    const cdn = client(registry.baseUrl, CDN_KEY);
    expect((await cdn.registerGraph('intruder', 'http://evil.example/graphql')).status).toBe(401);
    expect((await cdn.send({ method: 'POST', path: '/user/schema', headers: { 'content-type': 'application/graphql' }, body: subgraphSdl('user') })).status).toBe(401);
    expect((await cdn.get('/supergraph')).status).toBe(401);
    const asCdnHeader = await send(registry.baseUrl, { method: 'POST', path: '/user/schema', headers: { 'x-hive-cdn-key': CDN_KEY, 'content-type': 'application/graphql' }, body: 'type Query { x: Int }' });
    expect(asCdnHeader.status).toBe(401);
  });

  it('should serve each artifact with its ETag and version id, 304 on a matching If-None-Match (a rotated key too)', async () => {
    const latest = (await api.get('/supergraph/versions?limit=1')).json as { versions: Array<{ id: string; etags: Record<string, string> }> };
    for (const [name, type] of [['supergraph', 'text/plain'], ['sdl', 'text/plain'], ['sdl.graphql', 'text/plain'], ['services', 'application/json'], ['metadata', 'application/json']] as const) {
      const res = await artifact(`platform/${name}`, { 'x-hive-cdn-key': ROTATED_CDN_KEY });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.headers['x-hive-schema-version-id']).toBe(latest.versions[0]!.id);
      const again = await artifact(`platform/${name}`, { 'x-hive-cdn-key': CDN_KEY, 'if-none-match': String(res.headers.etag) });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(res.headers.etag);
    }
    const services = JSON.parse((await artifact('platform/services', { 'x-hive-cdn-key': CDN_KEY })).text) as Array<{ name: string; sdl: string; url: string }>;
    expect(services.map((service) => Object.keys(service))).toEqual([['name', 'sdl', 'url']]);
    const stale = await artifact('platform/supergraph', { 'x-hive-cdn-key': CDN_KEY, 'if-none-match': '"0000"' });
    expect(stale.status).toBe(200);
  });

  it('should return a version\'s artifacts byte for byte on its versioned path after newer versions', async () => {
    const before = await artifact('platform/supergraph', { 'x-hive-cdn-key': CDN_KEY });
    const id = String(before.headers['x-hive-schema-version-id']);
    expect((await publish('payment', subgraphSdl('payment'))).status).toBe(404); // its graph was removed
    await api.registerGraph('payment', 'http://payment.shop.svc.cluster.local:4000/graphql');
    expect((await publish('payment', subgraphSdl('payment'))).status).toBe(201);
    const now = await artifact('platform/supergraph', { 'x-hive-cdn-key': CDN_KEY });
    expect(now.headers['x-hive-schema-version-id']).not.toBe(id);
    const versioned = await artifact(`platform/version/${id}/supergraph`, { 'x-hive-cdn-key': CDN_KEY });
    expect(versioned.status).toBe(200);
    expect(Buffer.from(versioned.text).equals(Buffer.from(before.text))).toBe(true);
    expect(versioned.headers.etag).toBe(before.headers.etag);
    expect(versioned.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect((await artifact('platform/version/00000000-0000-4000-8000-000000000000/supergraph', { 'x-hive-cdn-key': CDN_KEY })).status).toBe(404);
    expect((await artifact('platform/version/not-a-uuid/supergraph', { 'x-hive-cdn-key': CDN_KEY })).status).toBe(404);
  });

  it('should answer an unknown artifact 404 before looking at the key, and /schema with 301 to /services', async () => {
    const unknown = await artifact('platform/passwords');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toBe('Not found.');
    const legacy = await artifact('platform/schema');
    expect(legacy.status).toBe(301);
    expect(legacy.headers.location).toBe('/artifacts/v1/platform/services');
  });
});
