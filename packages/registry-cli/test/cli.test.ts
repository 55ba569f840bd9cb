import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPrivateRedis, freePort, type PrivateRedis } from '../../../test/support/redis-server.js';
import { API_KEY, startRegistry, type RunningRegistry } from '../../../services/graph-registry/test/support/registry-fixture.js';
import { run } from './run-cli.js';
import { subgraphSdl } from '../../../test/support/subgraph-fixtures.js';

const V1 = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  name: String\n}\n';
const V2 = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  name: String\n  email: String\n}\n';
const BREAKING = 'type Query {\n  user(id: ID!): User\n}\n\ntype User {\n  id: ID!\n  email: String\n}\n';
const INVALID = 'type Query {\n  user: Missing\n}\n';

describe('graph-registry command', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;
  let strict: RunningRegistry;
  let dir: string;
  let env: Record<string, string>;
  const file = (name: string): string => join(dir, name);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url });
    strict = await startRegistry({ kind: 'redis', url: redis.url }, [API_KEY], { schemaPublishing: { policy: 'reject-breaking', keep: 100, topic: 'unused' } });
    dir = await mkdtemp(join(tmpdir(), 'registry-cli-'));
    const subgraphs = {
      'user.graphql': subgraphSdl('user'),
      'product.graphql': subgraphSdl('product'),
      // A @key on a field Plan does not have: the subgraphs do not compose.
      'product-bad-key.graphql': subgraphSdl('product').replace('type Plan @key(fields: "id")', 'type Plan @key(fields: "sku")'),
    };
    await Promise.all(Object.entries({ 'v1.graphql': V1, 'v2.graphql': V2, 'breaking.graphql': BREAKING, 'invalid.graphql': INVALID, ...subgraphs }).map(([name, sdl]) => writeFile(file(name), sdl)));
    env = { GRAPH_REGISTRY_URL: registry.baseUrl, GRAPH_REGISTRY_API_KEY: API_KEY };
  });

  afterAll(async () => {
    await registry.close();
    await strict.close();
    await redis.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('should publish, check, list versions and roll back, with exit statuses a pipeline can use', async () => {
    const first = await run(['schema', 'publish', file('v1.graphql')], env);
    expect(first).toMatchObject({ code: 0, stdout: expect.stringContaining('Published version 1') });
    const again = await run(['schema', 'publish', file('v1.graphql')], env);
    expect(again).toMatchObject({ code: 0, stdout: expect.stringContaining('Unchanged: the schema is version 1 already') });

    const safe = await run(['schema', 'check', file('v2.graphql')], env);
    expect(safe.code).toBe(0);
    expect(safe.stdout).toMatch(/Compared with version 1: 0 breaking, 0 dangerous, 1 safe\.\n {2}safe +FIELD_ADDED +User\.email +Field User\.email was added\./);

    const breaking = await run(['schema', 'check', file('breaking.graphql')], env);
    expect(breaking.code).toBe(1);
    expect(breaking.stdout).toMatch(/ {2}BREAKING +FIELD_REMOVED +User\.name +Field User\.name was removed\./);
    expect(breaking.stderr).toContain('1 breaking change(s).');

    expect((await run(['schema', 'publish', file('v2.graphql')], env)).stdout).toContain('Published version 2');
    const versions = await run(['schema', 'versions'], env);
    expect(versions.code).toBe(0);
    expect(versions.stdout.split('\n').filter(Boolean).map((line) => line.split(' ')[0])).toEqual(['v2', 'v1']);

    const rollback = await run(['schema', 'rollback', '1'], env);
    expect(rollback).toMatchObject({ code: 0, stdout: expect.stringContaining('Published version 3') });
    expect(rollback.stdout).toContain('BREAKING');
    expect((await fetch(`${registry.baseUrl}/schema`, { headers: { 'x-api-key': API_KEY } }).then((res) => res.text()))).toBe(V1);
  });

  it('should print an invalid schema\'s problems as FILE:LINE:COLUMN and exit 1', async () => {
    const res = await run(['schema', 'check', file('invalid.graphql')], env);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`${file('invalid.graphql')}:2:9  Unknown type "Missing".`);
  });

  it('should exit 1 when the policy refuses breaking changes, and publish them with --allow-breaking', async () => {
    const strictEnv = { ...env, GRAPH_REGISTRY_URL: strict.baseUrl };
    expect((await run(['schema', 'publish', file('v2.graphql')], strictEnv)).code).toBe(0);
    const refused = await run(['schema', 'publish', file('breaking.graphql')], strictEnv);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/BREAKING +FIELD_REMOVED +User\.name/);
    expect(refused.stderr).toContain('Refused: breaking changes refused by the schema policy');
    const forced = await run(['schema', 'publish', file('breaking.graphql'), '--allow-breaking'], strictEnv);
    expect(forced).toMatchObject({ code: 0, stdout: expect.stringContaining('Published version') });
  });

  it('should set, get, list and delete graphs, taking the URL and key from flags too', async () => {
    const flags = ['--url', registry.baseUrl, '--key', API_KEY];
    expect(await run([...flags, 'graph', 'set', 'orders', 'http://orders.example.com/graphql'])).toMatchObject({ code: 0 });
    expect((await run([...flags, 'graph', 'get', 'orders'])).stdout).toBe('http://orders.example.com/graphql\n');
    expect((await run([...flags, 'graph', 'list'])).stdout).toContain('orders\thttp://orders.example.com/graphql');
    expect((await run([...flags, 'graph', 'delete', 'orders'])).code).toBe(0);
    const gone = await run([...flags, 'graph', 'get', 'orders']);
    expect(gone).toMatchObject({ code: 1, stderr: 'refused: 404 not found\n' });
  });

  it('should check, publish, list and remove subgraphs and fetch the supergraph, exiting 1 when a subgraph does not compose', async () => {
    expect(await run(['supergraph', 'fetch'], env)).toMatchObject({ code: 1, stderr: expect.stringContaining('404') });
    expect((await run(['graph', 'set', 'user', 'http://user.shop.svc.cluster.local:4000/graphql'], env)).code).toBe(0);
    expect((await run(['graph', 'set', 'product', 'http://product.shop.svc.cluster.local:4000/graphql'], env)).code).toBe(0);
    expect(await run(['subgraph', 'check', 'user', file('user.graphql')], env)).toMatchObject({ code: 0 });
    expect(await run(['subgraph', 'publish', 'user', file('user.graphql')], env)).toMatchObject({ code: 0, stdout: expect.stringContaining('Published version 1') });
    expect(await run(['subgraph', 'publish', 'product', file('product.graphql')], env)).toMatchObject({ code: 0 });
    const refused = await run(['subgraph', 'publish', 'product', file('product-bad-key.graphql')], env);
    expect(refused).toMatchObject({ code: 1, stderr: expect.stringMatching(/KEY_INVALID_FIELDS Plan: [\s\S]*Refused: the subgraph schemas do not compose/) });
    expect((await run(['subgraph', 'check', 'product', file('product-bad-key.graphql')], env)).code).toBe(1);
    expect(await run(['subgraph', 'list'], env)).toMatchObject({ code: 0, stdout: 'product\tv1\thttp://product.shop.svc.cluster.local:4000/graphql\nuser\tv1\thttp://user.shop.svc.cluster.local:4000/graphql\n' });
    const supergraph = await run(['supergraph', 'fetch'], env);
    expect(supergraph).toMatchObject({ code: 0, stdout: expect.stringContaining('@join__graph(name: "product"') });
    expect(await run(['supergraph', 'fetch', '1'], env)).toMatchObject({ code: 0, stdout: expect.not.stringContaining('product') });
    expect((await run(['supergraph', 'fetch', 'latest'], env)).code).toBe(2);
    expect(await run(['subgraph', 'remove', 'product'], env)).toMatchObject({ code: 0 });
    expect((await run(['subgraph', 'remove', 'product'], env)).code).toBe(1);
    expect(await run(['subgraph', 'list'], env)).toMatchObject({ code: 0, stdout: expect.not.stringContaining('product') });
  });

  it('should exit 3 saying the key was refused', async () => {
    const res = await run(['schema', 'versions'], { ...env, GRAPH_REGISTRY_API_KEY: 'wrong-key' });
    expect(res.code).toBe(3);
    expect(res.stderr).toContain('the registry refused the API key (401 unauthorized)');
  });

  it('should exit 4 saying the registry cannot be reached', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const res = await run(['schema', 'check', file('v1.graphql')], { ...env, GRAPH_REGISTRY_URL: url });
    expect(res.code).toBe(4);
    expect(res.stderr).toContain(`cannot reach the registry at ${url}`);
  });

  it('should exit 2 with the usage for an unknown command, a missing key, a bad timeout or an unreadable file', async () => {
    expect((await run(['schema', 'destroy'], env)).code).toBe(2);
    for (const timeout of ['0', '-1', 'soon', '3601']) expect(await run(['schema', 'versions', '--timeout', timeout], env)).toMatchObject({ code: 2, stderr: expect.stringContaining('--timeout') });
    expect((await run(['graph', 'list'], { GRAPH_REGISTRY_URL: registry.baseUrl })).stderr).toContain('the API key is missing');
    expect((await run(['schema', 'check', file('none.graphql')], env)).stderr).toContain('cannot read');
  });
});
