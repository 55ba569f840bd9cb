import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import type { StoreConfig } from '@sp/core';
import { API_KEY, client, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { schemaNumber, versionsApi, type VersionBody } from './support/versions-client.js';

const V1 = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  name: String\n}\n';
const V2 = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  name: String\n  email: String\n}\n';
/** Breaking against V2: User.name removed. */
const V3_BREAKING = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  email: String\n}\n';

const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

interface Backend {
  store: StoreConfig;
  /** Empties the store between tests. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

async function redisBackend(): Promise<Backend> {
  const redis: PrivateRedis = await startPrivateRedis();
  const direct = new Redis(redis.url);
  return {
    store: { kind: 'redis', url: redis.url },
    reset: async () => void (await direct.flushdb()),
    close: async () => {
      direct.disconnect();
      await redis.stop();
    },
  };
}

const memoryBackend = (): Promise<Backend> => Promise.resolve({ store: { kind: 'memory' }, reset: () => Promise.resolve(), close: () => Promise.resolve() });

describe.each([
  ['a real Redis', redisBackend],
  ['the memory store', memoryBackend],
])('schema versions on %s', (_name, startBackend) => {
  let backend: Backend;
  let registry: RunningRegistry;
  let strict: RunningRegistry;
  let kept: RunningRegistry;

  beforeAll(async () => {
    backend = await startBackend();
  });

  afterAll(async () => {
    await backend.close();
  });

  // Fresh registries for each test (a memory store starts empty with its registry); on Redis
  // they share one store, emptied first.
  beforeEach(async () => {
    await backend.reset();
    registry = await startRegistry(backend.store);
    strict = await startRegistry(backend.store, [API_KEY], { schemaPublishing: { policy: 'reject-breaking', keep: 100, topic: 'unused' } });
    kept = await startRegistry(backend.store, [API_KEY], { schemaPublishing: { policy: 'allow', keep: 3, topic: 'unused' } });
  });

  afterEach(async () => {
    await Promise.all([registry.close(), strict.close(), kept.close()]);
  });

  it('should publish version 1 with its hash, time and key fingerprint, never the key, and serve it as the schema', async () => {
    const api = versionsApi(client(registry.baseUrl));
    const res = await api.publish(V1);
    expect(res.status).toBe(201);
    expect(res.headers.location).toBe('/schema/versions/1');
    const body = res.json as { created: boolean; version: VersionBody & { publishedAt: string }; report: object };
    expect(body.created).toBe(true);
    expect(body.version).toMatchObject({ version: 1, sha256: sha256(V1), previousVersion: null, rollbackOf: null, counts: { breaking: 0, dangerous: 0, safe: 0 } });
    expect(body.version.publisher).toBe(`key:${sha256(API_KEY).slice(0, 16)}`);
    expect(JSON.stringify(body)).not.toContain(API_KEY);
    expect(Date.now() - Date.parse(body.version.publishedAt)).toBeLessThan(60_000);
    expect((await client(registry.baseUrl).get('/schema')).text).toBe(V1);
    const stored = (await api.get(1)).json as VersionBody;
    expect(stored).toMatchObject({ version: 1, sdl: V1, report: { changes: [], counts: { breaking: 0, dangerous: 0, safe: 0 } } });
  });

  it('should answer a re-publish of the newest SDL with that version, creating nothing', async () => {
    const api = versionsApi(client(registry.baseUrl));
    await api.publish(V1);
    const again = await api.publish(V1);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ created: false, version: { version: 1, sha256: sha256(V1) }, report: { changes: [] } });
    expect((await api.list()).versions.map((v) => v.version)).toEqual([1]);
  });

  it('should compare a new version with the one before it', async () => {
    const api = versionsApi(client(registry.baseUrl));
    await api.publish(V1);
    const res = await api.publish(V2);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({
      version: { version: 2, previousVersion: 1, counts: { breaking: 0, dangerous: 0, safe: 1 } },
      report: { changes: [{ class: 'safe', kind: 'FIELD_ADDED', coordinate: 'User.email', message: 'Field User.email was added.' }] },
    });
  });

  it('should answer a dry run with the report and store nothing', async () => {
    const api = versionsApi(client(registry.baseUrl));
    await api.publish(V2);
    const res = await api.dryRun(V3_BREAKING);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ dryRun: true, baseVersion: 1, unchanged: false, report: { counts: { breaking: 1 }, changes: [{ kind: 'FIELD_REMOVED', coordinate: 'User.name' }] } });
    expect((await client(registry.baseUrl).get('/schema')).text).toBe(V2);
    expect((await api.list()).versions).toHaveLength(1);
    expect((await api.dryRun(V2)).json).toMatchObject({ dryRun: true, unchanged: true, report: { changes: [] } });
  });

  it('should check a dry run like a publish: an unusable schema is a 400', async () => {
    const res = await versionsApi(client(registry.baseUrl)).dryRun('type Order { id: ID! }');
    expect(res.status).toBe(400);
    expect(res.json).toMatchObject({ error: 'Query root type must be provided.' });
  });

  it('should refuse breaking changes with 409 and the report under reject-breaking, storing nothing, and publish them with the override header', async () => {
    const api = versionsApi(client(strict.baseUrl));
    await api.publish(V2);
    const refused = await api.publish(V3_BREAKING);
    expect(refused.status).toBe(409);
    expect(refused.json).toMatchObject({ baseVersion: 1, report: { counts: { breaking: 1 } } });
    expect((refused.json as { error: string }).error).toMatch(/X-Allow-Breaking-Changes/);
    expect((await client(strict.baseUrl).get('/schema')).text).toBe(V2);
    expect((await api.list()).versions).toHaveLength(1);
    const safe = await api.publish(`${V2}\ntype Extra {\n  id: ID\n}\n`);
    expect(safe.status).toBe(201);
    const forced = await api.publish(V3_BREAKING, { 'x-allow-breaking-changes': 'true' });
    expect(forced.status).toBe(201);
    expect(forced.json).toMatchObject({ version: { version: 3, counts: { breaking: 2 } } });
  });

  it('should roll back by publishing an old version as a new one with its own report, rewriting no history', async () => {
    const api = versionsApi(client(registry.baseUrl));
    await api.publish(V1);
    await api.publish(V2);
    const res = await api.rollback(1);
    expect(res.status).toBe(201);
    expect(res.json).toMatchObject({ version: { version: 3, rollbackOf: 1, previousVersion: 2, sha256: sha256(V1), counts: { breaking: 1 } } });
    expect((await api.get(3)).json).toMatchObject({ sdl: V1, report: { changes: [{ kind: 'FIELD_REMOVED', coordinate: 'User.email' }] } });
    expect((await client(registry.baseUrl).get('/schema')).text).toBe(V1);
    expect((await api.list()).versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect((await api.get(2)).json).toMatchObject({ sdl: V2 });
    expect((await api.rollback(3)).status).toBe(200);
  });

  it('should answer 404 to a rollback or a version that does not exist, and 400 to one that is not a number', async () => {
    const api = versionsApi(client(registry.baseUrl));
    expect((await api.rollback(7)).status).toBe(404);
    expect((await api.get(7)).json).toEqual({ error: 'no schema version 7' });
    expect((await client(registry.baseUrl).get('/schema/versions/abc')).status).toBe(400);
    expect((await client(registry.baseUrl).get('/schema/versions?limit=0')).status).toBe(400);
    expect((await client(registry.baseUrl).get('/schema/diff?from=1')).status).toBe(400);
    const notJson = await client(registry.baseUrl).send({ method: 'POST', path: '/schema/rollback', headers: { 'content-type': 'application/json' }, body: '{"version": "1"' });
    expect(notJson.status).toBe(400);
  });

  it('should keep only the newest versions of the retention setting, and never reuse a number', async () => {
    const api = versionsApi(client(kept.baseUrl));
    for (let i = 1; i <= 5; i += 1) expect((await api.publish(schemaNumber(i))).status).toBe(201);
    expect((await api.list()).versions.map((v) => v.version)).toEqual([5, 4, 3]);
    expect((await api.get(2)).status).toBe(404);
    expect((await api.rollback(1)).status).toBe(404);
    const next = await api.publish(schemaNumber(6));
    expect(next.json).toMatchObject({ version: { version: 6, previousVersion: 5 } });
    expect((await api.list()).versions.map((v) => v.version)).toEqual([6, 5, 4]);
  });

  it('should list versions newest first, a page at a time, without SDL', async () => {
    const api = versionsApi(client(registry.baseUrl));
    for (let i = 1; i <= 5; i += 1) await api.publish(schemaNumber(i));
    const first = await api.list('?limit=2');
    expect(first.versions.map((v) => v.version)).toEqual([5, 4]);
    expect(first.versions[0]).not.toHaveProperty('sdl');
    expect(first.next).toBe('/schema/versions?limit=2&before=4');
    const second = await api.list(first.next!.slice('/schema/versions'.length));
    expect(second.versions.map((v) => v.version)).toEqual([3, 2]);
    const third = await api.list(second.next!.slice('/schema/versions'.length));
    expect(third).toMatchObject({ versions: [{ version: 1 }], next: null });
  });

  it('should diff any two versions', async () => {
    const api = versionsApi(client(registry.baseUrl));
    await api.publish(V1);
    await api.publish(V2);
    await api.publish(V3_BREAKING, { 'x-allow-breaking-changes': 'true' });
    const res = await api.diff(1, 3);
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ from: 1, to: 3, report: { counts: { breaking: 1, dangerous: 0, safe: 1 } } });
    expect((await api.diff(3, 1)).json).toMatchObject({ report: { counts: { breaking: 1, safe: 1 } } });
    expect((await api.diff(1, 9)).status).toBe(404);
  });
});
