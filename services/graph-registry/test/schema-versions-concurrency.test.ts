import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { startPrivateRedis } from '../../../test/support/redis-server.js';
import { client, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { schemaNumber, versionsApi, type VersionBody } from './support/versions-client.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const PUBLISHES = 20;

describe.each([
  ['a standalone Redis', startPrivateRedis],
  ['a Redis Cluster (3 primaries + 3 replicas)', startRedisCluster],
  ['Sentinel (1 primary, 2 replicas, 3 sentinels)', startRedisSentinel],
])('concurrent schema publishes on %s', (_name, startStore) => {
  let store: { url: string; stop(): Promise<void> };
  let replicas: RunningRegistry[];

  beforeAll(async () => {
    store = await startStore();
    // Two registry replicas on one store: their publishes race in Redis, not in one process' queue.
    replicas = [await startRegistry({ kind: 'redis', url: store.url }), await startRegistry({ kind: 'redis', url: store.url })];
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await store.stop();
  });

  it(`should number ${PUBLISHES} concurrent publishes 1..${PUBLISHES}, none lost or doubled, each report against the version it follows`, async () => {
    const answers = await Promise.all(Array.from({ length: PUBLISHES }, (_, i) => versionsApi(client(replicas[i % 2]!.baseUrl)).publish(schemaNumber(i + 1))));
    expect(answers.map((res) => res.status)).toEqual(Array.from({ length: PUBLISHES }, () => 201));
    const numbers = answers.map((res) => (res.json as { version: VersionBody }).version.version).sort((a, b) => a - b);
    expect(numbers).toEqual(Array.from({ length: PUBLISHES }, (_, i) => i + 1));

    const api = versionsApi(client(replicas[0]!.baseUrl));
    expect((await api.list('?limit=100')).versions.map((v) => v.version)).toEqual(numbers.slice().reverse());
    const versions = await Promise.all(numbers.map(async (n) => (await api.get(n)).json as VersionBody));
    const fieldOf = (version: VersionBody): string => /f(\d+): Int/.exec(version.sdl!)![1]!;
    for (const [index, version] of versions.entries()) {
      if (index === 0) {
        expect(version).toMatchObject({ previousVersion: null, report: { changes: [] } });
        continue;
      }
      const before = versions[index - 1]!;
      expect(version.previousVersion).toBe(before.version);
      // Against its real predecessor: that one's field removed, its own added.
      expect(version.report!.changes).toEqual([
        { class: 'breaking', kind: 'FIELD_REMOVED', coordinate: `Query.f${fieldOf(before)}`, message: `Field Query.f${fieldOf(before)} was removed.` },
        { class: 'safe', kind: 'FIELD_ADDED', coordinate: `Query.f${fieldOf(version)}`, message: `Field Query.f${fieldOf(version)} was added.` },
      ]);
    }
    expect((await client(replicas[1]!.baseUrl).get('/schema')).text).toBe(versions[PUBLISHES - 1]!.sdl);
  }, 60_000);
});
