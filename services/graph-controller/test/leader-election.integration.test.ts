import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { startFakeKubeApi, type FakeKubeApi } from '../../../test/support/fake-kube-api.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { LEASE_NAMESPACE, startController, type RunningController } from './support/controller-fixture.js';
import { eventually, sleep } from '../../../test/support/eventually.js';
import { startRegistryServer, type RegistryServer } from './support/registry-server.js';
import { graph, serviceObject } from './support/services.js';
import { HANG_GUARD_MS, STALL_MS } from '../../../test/support/progress.js';

/** Each replica writes with a key of its own, so the registry can tell who wrote what. */
const KEYS = { 'replica-a': 'key-replica-a-0123456789', 'replica-b': 'key-replica-b-0123456789' } as const;
type Identity = keyof typeof KEYS;
const LEASE_DURATION_MS = 2000;
const RETRY_PERIOD_MS = 200;
/**
 * A lease far longer than any wait on a busy machine, for the tests whose point is that something
 * happens before the lease would run out (a released lease taken at once, leadership given up at
 * the renew deadline): "before the lease duration" then holds however slow the machine, where a
 * 2 s lease left half a second of scheduling slack. How long after the lease a dead leader is
 * replaced is timed by leader-elector.unit.test.ts on a fake clock.
 */
const LONG_LEASE_MS = 120_000;

let redis: PrivateRedis;
let registry: RegistryServer;
let store: Redis;
let api: FakeKubeApi;
const replicas: RunningController[] = [];

beforeAll(async () => {
  redis = await startPrivateRedis();
  registry = await startRegistryServer(redis.url, Object.values(KEYS));
  store = new Redis(redis.url);
}, HANG_GUARD_MS);

afterEach(async () => {
  await Promise.all(replicas.splice(0).map((replica) => replica.stop()));
  await api.close();
  registry.writes.length = 0;
  await store.flushdb();
});

afterAll(async () => {
  store.disconnect();
  await registry.close();
  await redis.stop();
});

function replica(identity: Identity, leaseDurationMs = LEASE_DURATION_MS): RunningController {
  const running = startController({
    kubeConfig: api.kubeConfig(),
    registryUrl: registry.url,
    apiKey: KEYS[identity],
    identity,
    leaseDurationMs,
    renewDeadlineMs: 1500,
    retryPeriodMs: RETRY_PERIOD_MS,
  });
  replicas.push(running);
  return running;
}

const record = async (name: string): Promise<string | undefined> => (await store.get(`graph:${name}`)) ?? undefined;
const identityOf = (apiKey: string): string | undefined => Object.entries(KEYS).find(([, key]) => key === apiKey)?.[0];
const writesBy = (identity: Identity) => registry.writes.filter((write) => write.apiKey === KEYS[identity]);

/** Who held the lease at `at`, from the fake API server's log of lease writes. */
function holderAt(at: number): string | undefined {
  const leaseWrites = api.writes.filter((write) => write.resource === 'leases' && write.at <= at);
  const spec = leaseWrites.at(-1)?.object.spec as { holderIdentity?: string } | undefined;
  return spec?.holderIdentity;
}

/** Every registry write came from the replica holding the lease at that moment. */
function expectWritesOnlyByTheHolder(): void {
  expect(registry.writes.length).toBeGreaterThan(0);
  for (const write of registry.writes) expect({ write: write.name, by: identityOf(write.apiKey) }).toEqual({ write: write.name, by: holderAt(write.at) });
}

/** Samples both replicas while `during` runs: never two leaders at once. */
async function neverTwoLeaders(during: Promise<unknown>): Promise<void> {
  let done = false;
  let both = 0;
  const watcher = (async () => {
    while (!done) {
      if (replicas.filter((candidate) => candidate.controller.isLeader()).length > 1) both += 1;
      await sleep(5);
    }
  })();
  try {
    await during;
  } finally {
    done = true;
    await watcher;
  }
  expect(both).toBe(0);
}

describe('two controller replicas', () => {
  it('should let only the leader write, and hand over within the lease duration when the leader dies', async () => {
    api = await startFakeKubeApi();
    const a = replica('replica-a');
    const b = replica('replica-b');
    await neverTwoLeaders(
      (async () => {
        const leader = await eventually(() => replicas.find((candidate) => candidate.controller.isLeader()), STALL_MS, 'a leader');
        expect(leader).toBe(a.controller.isLeader() ? a : b);
        for (const name of ['orders', 'billing', 'invoices']) api.create('services', serviceObject({ name, namespace: 'shop', annotations: graph(name) }));
        // How soon the first registrations land depends on how busy the machine is, not on the
        // election (its timings are checked below): bounded by progress, not by a wall-clock guess.
        await eventually(async () => (await store.keys('graph:*')).length === 3, { progress: () => [registry.writes.length, api.writes.length] }, 'three registered');
        await sleep(500);
      })(),
    );
    const [leader, follower] = a.controller.isLeader() ? [a, b] : [b, a];
    expect(await leader.metric('graph_controller_leader')).toBe(1);
    expect(await follower.metric('graph_controller_leader')).toBe(0);
    expect(writesBy(follower.identity as Identity)).toEqual([]);
    expect(writesBy(leader.identity as Identity)).toHaveLength(3);

    // The leader dies without releasing anything; meanwhile Services change with nobody leading.
    await leader.stop({ release: false });
    const killedAt = Date.now();
    api.remove('services', 'shop', 'billing');
    api.create('services', serviceObject({ name: 'payments', namespace: 'shop', annotations: graph('payments') }));
    await eventually(() => follower.controller.isLeader(), STALL_MS, 'takeover');
    const handover = Date.now() - killedAt;
    expect(handover).toBeGreaterThan(LEASE_DURATION_MS - 2 * RETRY_PERIOD_MS); // it waited for the lease to expire
    expect(api.get('leases', LEASE_NAMESPACE, 'graph-controller')).toMatchObject({ spec: { holderIdentity: follower.identity, leaseTransitions: 1 } });

    await eventually(async () => (await record('payments')) !== undefined && (await record('billing')) === undefined, STALL_MS, 'the new leader caught up');
    await follower.controller.idle();
    // It knew from its own informer what the dead leader had registered, and re-wrote nothing that was right.
    expect(writesBy(follower.identity as Identity).map((write) => `${write.method} ${write.name}`).sort()).toEqual(['DELETE billing', 'POST payments']);
    expectWritesOnlyByTheHolder();
  }, HANG_GUARD_MS);

  it('should hand over at once when the leader stops gracefully and releases the lease', async () => {
    api = await startFakeKubeApi();
    const a = replica('replica-a', LONG_LEASE_MS);
    await eventually(() => a.controller.isLeader(), STALL_MS);
    const b = replica('replica-b', LONG_LEASE_MS);
    await eventually(() => api.openWatches('services') === 2, STALL_MS);
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await eventually(async () => (await record('orders')) !== undefined, STALL_MS);

    await neverTwoLeaders(
      (async () => {
        await a.stop({ release: true });
        const releasedAt = Date.now();
        expect(api.get('leases', LEASE_NAMESPACE, 'graph-controller')!.spec).toMatchObject({ leaseDurationSeconds: 1 });
        // Without the release it would take the whole lease duration (LONG_LEASE_MS).
        await eventually(() => b.controller.isLeader(), LONG_LEASE_MS / 4, 'takeover');
        expect(Date.now() - releasedAt).toBeLessThan(LONG_LEASE_MS / 4);
      })(),
    );
    api.remove('services', 'shop', 'orders');
    await eventually(async () => (await record('orders')) === undefined, STALL_MS);
    // The registry server notes a write when its answer is sent, just after the record is gone.
    await eventually(() => writesBy('replica-b').length > 0, STALL_MS);
    expect(writesBy('replica-b').map((write) => `${write.method} ${write.name}`)).toEqual(['DELETE orders']);
    expectWritesOnlyByTheHolder();
  }, HANG_GUARD_MS);

  it('should stop writing when the lease cannot be renewed past the renew deadline, and resume once it can', async () => {
    api = await startFakeKubeApi();
    const a = replica('replica-a', LONG_LEASE_MS);
    await eventually(() => a.controller.isLeader(), STALL_MS);
    await eventually(() => api.openWatches('services') === 1, STALL_MS);
    const undo = api.failRequests({ method: 'PUT', path: /\/leases\/graph-controller$/ }, 500);
    const failingSince = Date.now();
    await eventually(async () => (await a.metric('graph_controller_leader')) === 0, LONG_LEASE_MS / 4, 'leadership lost');
    expect(Date.now() - failingSince).toBeLessThan(LONG_LEASE_MS / 4); // at the renew deadline (1.5 s), long before the lease runs out
    api.create('services', serviceObject({ name: 'orders', namespace: 'shop', annotations: graph('orders') }));
    await sleep(700);
    expect(registry.writes).toEqual([]);
    undo();
    await eventually(async () => (await record('orders')) !== undefined, STALL_MS, 'writing again');
    expect(await a.metric('graph_controller_leader')).toBe(1);
  }, HANG_GUARD_MS);
});
