import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { eventually } from '../../../test/support/eventually.js';
import { failoverUnderTraffic } from '../../../test/support/failover-traffic.js';
import { startRedisCluster, type RedisClusterSet } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { send } from './support/http-client.js';
import { client, startRegistry, type Client, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const NAMES = Array.from({ length: 30 }, (_, i) => `graph-${i}`);
const urlOf = (name: string): string => `http://${name}.example.com/graphql`;

describe.each([
  ['a Redis Cluster (3 primaries + 3 replicas)', startRedisCluster],
  ['Sentinel (1 primary, 2 replicas, 3 sentinels)', startRedisSentinel],
])('graph registry on %s whose primary is killed', (_name, startSet) => {
  let set: RedisClusterSet;
  let registry: RunningRegistry;
  let api: Client;

  beforeAll(async () => {
    set = await startSet();
    registry = await startRegistry({ kind: 'redis', url: set.url });
    api = client(registry.baseUrl);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await set.stop();
  });

  it('should spread graphs over every primary, answer 503 fast only during the failover, then list every acknowledged graph without a restart', async () => {
    // Traffic comes once the registry is ready, as an orchestrator sends it.
    await eventually(async () => (await send(registry.managementUrl, { method: 'GET', path: '/readyz' })).status === 200 || undefined);
    for (const name of NAMES) expect((await api.registerGraph(name, urlOf(name))).status).toBe(204);
    expect((await api.storeSchema('type Query { a: Int }')).status).toBe(201);
    const holders = new Set(await Promise.all(NAMES.map((name) => set.primaryPortOf(`graph:${name}`))));
    expect([...holders].sort()).toEqual(await set.primaryPorts());

    const victim = await set.primaryPortOf('graph:schema');
    const { outcomes, killedAt, healthyAt } = await failoverUnderTraffic({
      call: async (n) => {
      const res = n % 3 === 0 ? await api.get('/') : await api.get(`/${NAMES[n % NAMES.length]!}`);
      if (res.status !== 200) throw Object.assign(new Error(`status ${res.status}`), { status: res.status, body: res.json });
    },
      kill: () => set.kill(victim),
      waitUntilHealthy: () => set.waitUntilHealthy(),
      recovered: async () => (await api.get('/schema')).status === 200 || undefined,
      what: 'the schema readable after the failover',
    });

    for (const failure of outcomes.filter((outcome) => outcome.error !== undefined)) {
      expect(failure.error).toMatchObject({ status: 503, body: { error: 'redis is unavailable' } });
      expect(failure.endedAt - failure.startedAt).toBeLessThan(1500);
      expect(failure.endedAt).toBeGreaterThanOrEqual(killedAt);
      expect(failure.startedAt).toBeLessThanOrEqual(healthyAt + 3000);
    }
    expect(outcomes.some((outcome) => outcome.error === undefined && outcome.startedAt > healthyAt)).toBe(true);

    const listed = await api.get('/');
    expect(listed.status).toBe(200);
    expect(listed.json).toMatchObject({ graphs: Object.fromEntries(NAMES.map((name) => [name, urlOf(name)])) });
    expect((await api.get('/schema')).text).toBe('type Query { a: Int }');
    expect((await api.registerGraph('after', urlOf('after'))).status).toBe(204);
    expect((await api.get('/after')).text).toBe(urlOf('after'));
  }, 60_000);
});
