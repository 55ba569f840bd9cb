import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { DEFAULT_SCHEMA_CHECKER } from '../src/schemas/schema-checker.js';
import { inputTypesAsOutputs, largeValidSchema, unknownTypeReferences } from './support/hostile-schemas.js';
import { lookupP99Bound, lookupsDuring, p99 } from './support/lookups.js';
import { API_KEY, client, startRegistry, startRegistryProcessOnPrivateRedis, type Client, type RegistryOnRedis, type RegistryProcess, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const MiB = 1024 * 1024;

// The registries whose lookups are measured run in a process of their own, as in production: the
// test process's own work and garbage collection must not be what holds the lookups.
describe('cost of a schema upload (issue 25)', () => {
  let running: RegistryOnRedis<RegistryProcess>;
  let direct: Redis;
  let registry: RegistryProcess;
  let api: Client;

  beforeAll(async () => {
    running = await startRegistryProcessOnPrivateRedis();
    ({ direct, registry, api } = running);
    await api.registerGraph('orders', 'http://orders.example.com/graphql');
    // A registry that has started: its schema worker has loaded graphql-js.
    expect((await api.send({ method: 'POST', path: '/schema?dryRun=true', headers: { 'content-type': 'text/plain' }, body: 'type Query { a: Int }' })).status).toBe(200);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await running.close();
  });

  it.each([
    ['type definitions and thousands of references to a type that does not exist', unknownTypeReferences(MiB)],
    ['one validateSchema problem per field', inputTypesAsOutputs(MiB)],
  ])('should answer a hostile 1 MiB schema (%s) with a 4xx within 2 s while lookups keep a p99 under 100 ms (or twice a quiet p99 on a loaded machine)', async (_case, sdl) => {
    expect(Buffer.byteLength(sdl)).toBeGreaterThan(MiB - 64);
    const { bound } = await lookupP99Bound(registry.baseUrl);
    const { result, lookupsMs } = await lookupsDuring(registry.baseUrl, () => api.storeSchema(sdl));
    expect([400, 422]).toContain(result.status);
    expect(result.durationMs).toBeLessThan(2000);
    expect(lookupsMs.length).toBeGreaterThan(10);
    expect(p99(lookupsMs)).toBeLessThan(bound);
    expect(await direct.exists('graph:schema')).toBe(0);
  });
});

describe('checks and limits of a schema, whatever the machine load', () => {
  let running: RegistryOnRedis<RegistryProcess>;
  let direct: Redis;
  let api: Client;

  // A budget no check here reaches, even on a loaded machine: the limits answer, not the clock.
  beforeAll(async () => {
    running = await startRegistryProcessOnPrivateRedis({ Registry__SchemaCheckTimeoutMs: '60000' });
    ({ direct, api } = running);
    await api.registerGraph('orders', 'http://orders.example.com/graphql');
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await running.close();
  });

  it('should name the unknown type, stopping after the first ten of them', async () => {
    const res = await api.storeSchema(unknownTypeReferences(256 * 1024));
    expect(res.status).toBe(400);
    const body = res.json as { error: string; problems: Array<{ message: string }> };
    expect(body.error).toBe('Unknown type "Missing".');
    expect(body.problems).toHaveLength(10);
  });

  it('should report at most 100 problems of a schema with thousands', async () => {
    const res = await api.storeSchema(inputTypesAsOutputs(64 * 1024));
    expect(res.status).toBe(400);
    const body = res.json as { problems: Array<{ message: string; locations: unknown[] }> };
    expect(body.problems).toHaveLength(100);
    expect(body.problems[0]).toEqual({ message: 'The type of Query.f0 must be Output Type but got: I.', locations: [{ line: 3, column: 6 }] });
  });

  it('should store a valid schema while lookups keep their p99', async () => {
    const sdl = largeValidSchema(128 * 1024);
    const { bound } = await lookupP99Bound(running.registry.baseUrl);
    const { result, lookupsMs } = await lookupsDuring(running.registry.baseUrl, () => api.storeSchema(sdl));
    expect(result.status).toBe(201);
    expect(p99(lookupsMs)).toBeLessThan(bound);
    expect(await direct.get('graph:schema')).toBe(sdl);
    await direct.del('graph:schema');
  });

  it('should answer 422 to a schema of more than 500 000 tokens', async () => {
    const sdl = `type Query { a(x: [Int] = [${'1 '.repeat(510_000)}]): Int }`;
    const res = await api.storeSchema(sdl);
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ error: 'schema too complex: schema has more than 500000 tokens' });
  });

  it('should answer 422 to a schema of more than 10 000 definitions', async () => {
    const sdl = `type Query { a: Int }\n${Array.from({ length: 10_000 }, (_, i) => `scalar S${i}\n`).join('')}`;
    const res = await api.storeSchema(sdl);
    expect(res.status).toBe(422);
    expect(res.json).toEqual({ error: 'schema too complex: schema has more than 10000 definitions' });
    expect(await direct.exists('graph:schema')).toBe(0);
  });
});

describe('time budget of a schema check', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url }, [API_KEY], { schemaChecks: { ...DEFAULT_SCHEMA_CHECKER, timeBudgetMs: 300 } });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await redis.stop();
  });

  it('should stop a check past its budget with 422, then check the next schema in a fresh worker', async () => {
    const api = client(registry.baseUrl);
    const slow = await api.storeSchema(inputTypesAsOutputs(MiB));
    expect(slow.status).toBe(422);
    expect(slow.json).toEqual({ error: 'schema too complex: checking it takes longer than 300 ms' });
    expect((await api.storeSchema('type Query { a: Int }')).status).toBe(201);
  });

  it('should answer 503 with Retry-After when more schemas wait than the queue holds', async () => {
    const api = client(registry.baseUrl);
    // Dry runs: publishes wait for their turn before the checker, dry runs go to it at once.
    const sdl = largeValidSchema(256 * 1024);
    const answers = await Promise.all(
      Array.from({ length: DEFAULT_SCHEMA_CHECKER.maxQueued + 4 }, () =>
        api.send({ method: 'POST', path: '/schema?dryRun=true', headers: { 'content-type': 'text/plain' }, body: sdl, timeoutMs: 30_000 }),
      ),
    );
    const busy = answers.filter((res) => res.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    expect(busy[0]!.headers['retry-after']).toBe('1');
    expect(busy[0]!.json).toEqual({ error: 'schema checks are busy; retry later' });
  });
});
