import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { startManagementServer } from '@sp/http';
import { wireGraphController } from '../src/graph-controller.js';
import { loadConfig } from '../src/config.js';
import { startFakeKubeApi, type FakeKubeApi, type FakeKubeApiOptions } from '../../../test/support/fake-kube-api.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { startController, type ControllerFixtureOptions, type RunningController } from './support/controller-fixture.js';
import { eventually, sleep } from '../../../test/support/eventually.js';
import { startRegistryServer, type RegistryServer } from './support/registry-server.js';
import { allows, manifests, verbOf, type PolicyRule } from './support/rbac.js';
import { graph, serviceObject } from './support/services.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const API_KEY = 'controller-key-0123456789';
const ordersUrl = 'http://orders.shop.svc.cluster.local:8080/graphql';

let redis: PrivateRedis;
let registry: RegistryServer;
let store: Redis;
let api: FakeKubeApi | undefined;
let running: RunningController | undefined;

beforeAll(async () => {
  redis = await startPrivateRedis();
  registry = await startRegistryServer(redis.url, [API_KEY]);
  store = new Redis(redis.url);
}, HANG_GUARD_MS);

afterEach(async () => {
  await running?.stop();
  await api?.close();
  running = undefined;
  api = undefined;
  registry.writes.length = 0;
  await store.flushdb();
});

afterAll(async () => {
  store.disconnect();
  await registry.close();
  await redis.stop();
});

/** A fresh fake API server and a controller on it, leading at once (it is alone). */
async function setUp(apiOptions: FakeKubeApiOptions = {}, controllerOptions: Partial<ControllerFixtureOptions> = {}): Promise<{ api: FakeKubeApi; controller: RunningController }> {
  api = await startFakeKubeApi(apiOptions);
  running = startController({ kubeConfig: api.kubeConfig(), registryUrl: registry.url, apiKey: API_KEY, ...controllerOptions });
  await eventually(() => running!.controller.isLeader() && api!.openWatches('services') > 0, 5000, 'leading and watching');
  return { api, controller: running };
}

/** The registry's record, read straight from Redis (`graph:{name}`). */
const record = async (name: string): Promise<string | undefined> => (await store.get(`graph:${name}`)) ?? undefined;
const recordIs = (name: string, expected: string | undefined, timeoutMs = 1000) =>
  eventually(async () => (await record(name)) === expected, timeoutMs, `graph:${name} = ${expected}`);
const lists = (fake: FakeKubeApi) => fake.requests.filter((request) => request.path.endsWith('/services') && request.query.watch === undefined).length;
const posts = () => registry.writes.filter((write) => write.method === 'POST').length;

/*
 * The in-test API server (test/support/fake-kube-api.ts) only for faults the real kube-apiserver
 * cannot be made to produce on demand: a watch cut in the middle of an event line, a watch that
 * stalls without failing, 410 Gone after its history was compacted, bookmarks every few hundred
 * ms, a list answering 500 — and for what only its request log shows (which paths were listed,
 * how often). Everything else runs against the real server: controller.kube-apiserver.test.ts.
 */
describe('graph controller against the in-test API server (faults) and the real registry', () => {
  it('should converge after the watch connection is cut mid-stream, resuming without a relist', async () => {
    const { api } = await setUp();
    for (let i = 0; i < 5; i += 1) api.create('services', serviceObject({ name: `before-${i}`, namespace: 'shop', annotations: graph(`before-${i}`) }));
    await eventually(async () => (await store.keys('graph:*')).length === 5, 2000, 'first five registered');
    expect(api.cutWatches({ partialLine: true })).toBe(1); // half an event line, then the socket is destroyed
    for (let i = 0; i < 5; i += 1) api.create('services', serviceObject({ name: `after-${i}`, namespace: 'shop', annotations: graph(`after-${i}`) }));
    await eventually(async () => (await store.keys('graph:*')).length === 10, 2000, 'all ten registered');
    expect(await record('after-4')).toBe('http://after-4.shop.svc.cluster.local:8080/graphql');
    expect(await running!.metric('graph_controller_watch_restarts_total', { reason: 'error' })).toBeGreaterThanOrEqual(1);
    expect(lists(api)).toBe(1);
    const watches = api.requests.filter((request) => request.query.watch === 'true');
    expect(watches.length).toBeGreaterThanOrEqual(2);
    expect(Number(watches.at(-1)!.query.resourceVersion)).toBeGreaterThan(Number(watches[0]!.query.resourceVersion));
  });

  it.each(['event', 'http'] as const)('should relist after 410 Gone (%s) and catch what the watch missed', async (goneMode) => {
    const { api } = await setUp({ goneMode });
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await recordIs('orders', ordersUrl);
    api.pauseWatches();
    api.remove('services', 'shop', 'orders'); // only a relist can tell: the DELETED event is compacted away
    api.create('services', serviceObject({ name: 'billing', namespace: 'shop', annotations: graph('billing') }));
    api.compact();
    api.cutWatches();
    await recordIs('orders', undefined, 2000);
    await recordIs('billing', 'http://billing.shop.svc.cluster.local:8080/graphql', 2000);
    expect(lists(api)).toBe(2);
  });

  it('should restart a silent watch with the watchdog and catch up from its resourceVersion', async () => {
    const { api } = await setUp({}, { watchIdleMs: 600 });
    expect(api.pauseWatches()).toBe(1);
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await sleep(300);
    expect(await record('orders')).toBeUndefined(); // the stalled watch delivers nothing
    await recordIs('orders', ordersUrl, 2000);
    expect(await running!.metric('graph_controller_watch_restarts_total', { reason: 'idle' })).toBeGreaterThanOrEqual(1);
    expect(lists(api)).toBe(1);
  });

  it('should keep a quiet watch that receives bookmarks (it asks for them)', async () => {
    const { api } = await setUp({ bookmarkIntervalMs: 150 }, { watchIdleMs: 500 });
    await sleep(1300);
    expect(await running!.metric('graph_controller_watch_restarts_total', { reason: 'idle' })).toBe(0);
    const watch = api.requests.find((request) => request.query.watch === 'true')!;
    expect(watch.query).toMatchObject({ allowWatchBookmarks: 'true', resourceVersion: expect.any(String), timeoutSeconds: expect.any(String) });
    expect(api.requests.filter((request) => request.query.watch === 'true')).toHaveLength(1);
  });

  it('should re-assert every registration on resync, and write nothing while the registry is right', async () => {
    const { api } = await setUp({}, { resyncMs: 300 });
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await recordIs('orders', ordersUrl);
    await sleep(1000);
    expect(posts()).toBe(1);
    expect(lists(api)).toBeGreaterThanOrEqual(3); // the periodic full relist
    expect(await running!.metric('graph_controller_reconciles_total', { result: 'unchanged' })).toBeGreaterThanOrEqual(2);
    await store.flushdb(); // the registry lost its data
    await recordIs('orders', ordersUrl);
    await eventually(() => posts() === 2);
    await running!.controller.idle();
    expect(await running!.metric('graph_controller_registered_names')).toBe(1);
  });

  it('should keep a healthy watch open through resyncs, and list again only when the watch missed something', async () => {
    const { api } = await setUp({}, { resyncMs: 400, watchIdleMs: 60_000 });
    const watches = () => api.requests.filter((request) => request.path.endsWith('/services') && request.query.watch === 'true').length;
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await recordIs('orders', ordersUrl);
    await sleep(1300);
    expect(lists(api)).toBeGreaterThanOrEqual(3); // the periodic full list, compared with the cache…
    expect(watches()).toBe(1); // …while the watch stays open: changes are not held up by a resync
    api.pauseWatches(); // events are lost from now on, without the connection failing
    api.remove('services', 'shop', 'orders');
    api.create('services', serviceObject({ name: 'billing', namespace: 'shop', annotations: graph('billing') }));
    await recordIs('orders', undefined, 3000);
    await recordIs('billing', 'http://billing.shop.svc.cluster.local:8080/graphql', 3000);
    expect(watches()).toBe(2); // the informer listed again and watches anew
  });

  it('should record the names of a start in batches, not one ownership write per name (the request log)', async () => {
    const count = 500;
    api = await startFakeKubeApi();
    for (let i = 0; i < count; i += 1) api.create('services', serviceObject({ name: `svc-${i}`, namespace: 'shop', annotations: graph(`g-${i}`) }));
    running = startController({ kubeConfig: api.kubeConfig(), registryUrl: registry.url, apiKey: API_KEY });
    await eventually(async () => (await store.dbsize()) === count, { progress: () => store.dbsize() }, 'all registered');
    await running.controller.idle();
    const recordWrites = api.requests.filter((request) => ['POST', 'PUT'].includes(request.method) && request.path.includes('/configmaps'));
    // 64 shards: every winner is recorded at once when the informers have listed; the reconciles
    // that ran before that add a few writes of their own. One write per name would be 500.
    expect(recordWrites.length).toBeLessThanOrEqual(2 * 64);
    expect(new Set(api.list('configmaps').map((map) => map.metadata.name)).size).toBeLessThanOrEqual(64);
  }, HANG_GUARD_MS);

  it('should watch only the configured namespaces', async () => {
    const { api } = await setUp({}, { namespaces: ['shop', 'billing'] });
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    api.create('services', serviceObject({ name: 'stray', namespace: 'elsewhere', annotations: graph('stray') }));
    api.create('services', serviceObject({ name: 'invoices', namespace: 'billing', annotations: graph('invoices') }));
    await recordIs('orders', ordersUrl);
    await recordIs('invoices', 'http://invoices.billing.svc.cluster.local:8080/graphql');
    await running!.controller.idle();
    expect(await record('stray')).toBeUndefined();
    const paths = new Set(api.requests.filter((request) => request.path.endsWith('/services')).map((request) => request.path));
    expect(paths).toEqual(new Set(['/api/v1/namespaces/shop/services', '/api/v1/namespaces/billing/services']));
  });
});

/** Every request the controller made is one the RBAC of k8s/graph-controller allows (so the manifests grant enough). */
function expectAllowedByManifests(fake: FakeKubeApi): void {
  const rules = manifests('graph-controller').flatMap((object) => (object.kind === 'ClusterRole' || object.kind === 'Role' ? (object.rules as PolicyRule[]) : []));
  const route = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/(?:namespaces\/[^/]+\/)?([^/]+)(?:\/([^/]+))?$/;
  const denied = fake.requests.filter((request) => {
    const [, group = '', resource = '', name] = route.exec(request.path) ?? [];
    const verb = verbOf(request.method, name === undefined, request.query.watch === 'true');
    return !allows(rules, { group, resource, verb, name });
  });
  expect(denied).toEqual([]);
  const verbs = new Set(fake.requests.map((request) => `${request.method} ${request.path.replace(/\/namespaces\/[^/]+/, '')}${request.query.watch ? ' watch' : ''}`));
  expect([...verbs].sort()).toEqual([
    'GET /api/v1/configmaps',
    'GET /api/v1/configmaps/graph-controller-registrations',
    'GET /api/v1/services',
    'GET /api/v1/services watch',
    'GET /apis/coordination.k8s.io/v1/leases/graph-controller',
    'POST /api/v1/configmaps',
    'POST /api/v1/events',
    'POST /apis/coordination.k8s.io/v1/leases',
    'PUT /apis/coordination.k8s.io/v1/leases/graph-controller',
  ]);
}

describe('graph controller as main.ts runs it', () => {
  it('should start from environment variables, report readiness after the informers synced, and expose its metrics', async () => {
    api = await startFakeKubeApi();
    const dir = mkdtempSync(join(tmpdir(), 'graph-controller-'));
    const kubeconfig = join(dir, 'config');
    writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: ${api.url}\n    insecure-skip-tls-verify: true\nusers:\n- name: fake\n  user: {}\ncontexts:\n- name: fake\n  context: {cluster: fake, user: fake}\ncurrent-context: fake\n`);
    const previous = process.env.KUBECONFIG;
    process.env.KUBECONFIG = kubeconfig;
    const undo = api.failRequests({ method: 'GET', path: /^\/api\/v1\/services$/ }, 500);
    try {
      const config = loadConfig({
        Registry__Url: registry.url,
        Registry__ApiKey: API_KEY,
        Controller__LeaseNamespace: 'platform',
        Controller__BackoffBaseMs: '100',
        Controller__BackoffMaxMs: '200',
        KUBECONFIG: kubeconfig,
        POD_NAME: 'graph-controller-0',
      });
      const { Registry } = await import('prom-client');
      const metrics = new Registry();
      const controller = wireGraphController(config, { logger: silentLogger(), registry: metrics, now: Date.now });
      const management = await startManagementServer({ port: 0, host: '127.0.0.1', registry: metrics, readiness: controller.readiness, logger: silentLogger() });
      controller.start();
      try {
        const readyz = () => fetch(`http://127.0.0.1:${management.port}/readyz`).then(async (response) => ({ status: response.status, body: (await response.json()) as { failing: string[] } }));
        expect(await readyz()).toMatchObject({ status: 503, body: { failing: ['informers'] } });
        undo();
        await eventually(async () => (await readyz()).status === 200, 3000, 'ready');
        api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
        api.create('services', serviceObject({ name: 'broken', namespace: 'shop', annotations: graph('Broken') }));
        await recordIs('orders', ordersUrl);
        await eventually(() => api!.list('events').length === 2);
        await controller.idle();
        const text = await (await fetch(`http://127.0.0.1:${management.port}/metrics`)).text();
        for (const line of [
          'graph_controller_reconciles_total{result="registered"} 1',
          'graph_controller_registered_names 1',
          'graph_controller_queue_depth 0',
          'graph_controller_leader 1',
          'graph_controller_watch_restarts_total{reason="error"}',
        ]) {
          expect(text).toContain(line);
        }
        expect(api.get('leases', 'platform', 'graph-controller')).toMatchObject({ spec: { holderIdentity: 'graph-controller-0' } });
      } finally {
        await controller.stop({ releaseLease: true });
        await management.close();
      }
      expect(api.get('leases', 'platform', 'graph-controller')).toMatchObject({ spec: { leaseDurationSeconds: 1 } });
      expect(api.get('leases', 'platform', 'graph-controller')!.spec).not.toHaveProperty('holderIdentity');
      expectAllowedByManifests(api);
    } finally {
      if (previous === undefined) delete process.env.KUBECONFIG;
      else process.env.KUBECONFIG = previous;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
