import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startRedisCluster } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { startPrivateRedis } from '../../../test/support/redis-server.js';
import { client, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { schemaNumber, versionsApi, type VersionBody } from './support/versions-client.js';
import { send } from './support/http-client.js';
import { subgraphSdl } from '../../../test/support/subgraph-fixtures.js';
import { sha256Hex } from '../src/schemas/schema-publisher.js';
import { DEFAULT_FEDERATION } from '../src/federation/supergraph-composer.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const PUBLISHES = 20;
const SUBGRAPH_PUBLISHES = 30;
const CDN_KEY = 'cdn-key-concurrency-0123456789';
const GRAPHS = ['user', 'product', 'payment'] as const;

/** Subgraph `name`'s SDL with one more field (`extra{n}`) on a type of its own. */
function subgraphWithField(name: (typeof GRAPHS)[number], n: number): string {
  const anchor = { user: '  name: String!\n', product: '  name: String!\n', payment: '  checkoutSessionId: String!\n' }[name];
  return subgraphSdl(name).replace(anchor, `${anchor}  extra${n}: Int\n`);
}

/** 201, or any other answer with its body, so a failure says why a publish was refused. */
const answered = (res: { status: number; text: string }): number | { status: number; body: string } => (res.status === 201 ? 201 : { status: res.status, body: res.text });

interface SupergraphBody {
  version: number;
  id: string;
  previousVersion: number | null;
  cause: { kind: string; subgraph: string };
  subgraphs: Array<{ name: string; version: number; sha256: string }>;
}

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
    const options = { cdn: { keys: [CDN_KEY], target: 'default' }, federation: { ...DEFAULT_FEDERATION, keepSupergraph: 100 } };
    replicas = [await startRegistry({ kind: 'redis', url: store.url }, undefined, options), await startRegistry({ kind: 'redis', url: store.url }, undefined, options)];
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await Promise.all(replicas.map((replica) => replica.close()));
    await store.stop();
  });

  it(`should number ${PUBLISHES} concurrent publishes 1..${PUBLISHES}, none lost or doubled, each report against the version it follows`, async () => {
    const answers = await Promise.all(Array.from({ length: PUBLISHES }, (_, i) => versionsApi(client(replicas[i % 2]!.baseUrl)).publish(schemaNumber(i + 1))));
    expect(answers.map(answered)).toEqual(Array.from({ length: PUBLISHES }, () => 201));
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

  it(`should make ${SUBGRAPH_PUBLISHES} concurrent subgraph publishes one line of supergraph versions, each composed from the subgraph versions it names`, async () => {
    const apis = replicas.map((replica) => client(replica.baseUrl));
    // The publishes compose one after another (one line of versions): the last waits for all the
    // others, seconds on a loaded machine. What is checked is the line, not how fast it is drawn
    // (make bench measures composition time), so each answer may take up to the hang guard's minute.
    const publish = (i: number, name: string, sdl: string) => apis[i % 2]!.send({ method: 'POST', path: `/${name}/schema`, headers: { 'content-type': 'application/graphql' }, body: sdl, timeoutMs: 60_000 });
    for (const name of GRAPHS) expect((await apis[0]!.registerGraph(name, `http://${name}.shop.svc.cluster.local:4000/graphql`)).status).toBe(204);
    for (const name of GRAPHS) expect((await publish(0, name, subgraphSdl(name))).status).toBe(201);
    const answers = await Promise.all(Array.from({ length: SUBGRAPH_PUBLISHES }, (_, i) => publish(i, GRAPHS[i % 3]!, subgraphWithField(GRAPHS[i % 3]!, i))));
    expect(answers.map(answered)).toEqual(Array.from({ length: SUBGRAPH_PUBLISHES }, () => 201));
    const composed = answers.map((res) => (res.json as { supergraph: { version: number } }).supergraph.version).sort((a, b) => a - b);
    const total = GRAPHS.length + SUBGRAPH_PUBLISHES;
    expect(composed).toEqual(Array.from({ length: SUBGRAPH_PUBLISHES }, (_, i) => i + 1 + GRAPHS.length));
    // Each version follows the one before it and names, for every subgraph, the version whose SDL it was composed from.
    const versions = await Promise.all(Array.from({ length: total }, async (_, i) => (await apis[1]!.get(`/supergraph/versions/${i + 1}`)).json as SupergraphBody));
    for (const [index, version] of versions.entries()) {
      expect(version.previousVersion).toBe(index === 0 ? null : index);
      const services = JSON.parse((await send(replicas[index % 2]!.baseUrl, { method: 'GET', path: `/artifacts/v1/default/version/${version.id}/services`, headers: { 'x-hive-cdn-key': CDN_KEY } })).text) as Array<{ name: string; sdl: string }>;
      expect(services.map((service) => service.name)).toEqual(version.subgraphs.map((member) => member.name));
      for (const member of version.subgraphs) {
        const stored = (await apis[0]!.get(`/${member.name}/schema/versions/${member.version}`)).json as VersionBody;
        expect(sha256Hex(stored.sdl!)).toBe(member.sha256);
        expect(sha256Hex(services.find((service) => service.name === member.name)!.sdl)).toBe(member.sha256);
      }
      if (index > 0) {
        // Only the subgraph that caused it moved on, by one version.
        const before = new Map(versions[index - 1]!.subgraphs.map((member) => [member.name, member.version]));
        for (const member of version.subgraphs) expect(member.version).toBe((before.get(member.name) ?? 0) + (member.name === version.cause.subgraph ? 1 : 0));
      }
    }
  }, 120_000);
});
