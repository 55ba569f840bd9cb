import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createKafkaPublisher, type EventPublisher } from '@sp/messaging';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import { sleep } from '../../../test/support/eventually.js';
import { infra } from '../../../test/support/infra.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { DEFAULT_SCHEMA_PUBLISHING } from '../src/schemas/schema-publisher.js';
import { client, silentLogger, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { schemaNumber, versionsApi } from './support/versions-client.js';
import { subgraphSdl } from '../../../test/support/subgraph-fixtures.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

describe('SchemaPublishedEvent on Kafka', () => {
  const topic = `schema-changes-test-${randomUUID()}`;
  let redis: PrivateRedis;
  let events: EventPublisher;
  let collector: EventCollector;
  let registry: RunningRegistry;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    collector = await collectEvents([topic]);
    events = createKafkaPublisher({ brokers: infra('KAFKA_BROKERS').split(','), clientId: 'graph-registry-test', source: '/subscription-platform/graph-registry', logger: silentLogger });
    registry = await startRegistry({ kind: 'redis', url: redis.url }, undefined, { schemaPublishing: { ...DEFAULT_SCHEMA_PUBLISHING, topic }, events });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await events.close();
    await collector.close();
    await redis.stop();
  });

  it('should send one event per version, with CloudEvents headers, in order, and none for a re-publish or a dry run', async () => {
    const api = versionsApi(client(registry.baseUrl));
    expect((await api.publish(schemaNumber(1))).status).toBe(201);
    expect((await api.publish(schemaNumber(2))).status).toBe(201);
    expect((await api.publish(schemaNumber(2))).status).toBe(200);
    expect((await api.dryRun(schemaNumber(3))).status).toBe(200);
    expect((await api.rollback(1)).status).toBe(201);

    await collector.waitFor((event) => event.value.version === 3);
    await sleep(1000); // anything published for the re-publish or the dry run would be here by now
    expect(collector.events.map((event) => event.value.version)).toEqual([1, 2, 3]);
    for (const event of collector.events) {
      expectEventPayload('SchemaPublishedEvent', event.value);
      expect(event.key).toBe('graph:schema');
      expect(event.headers).toMatchObject({
        ce_specversion: '1.0',
        ce_type: 'SchemaPublishedEvent',
        ce_id: `SchemaPublishedEvent:${String(event.value.version)}`,
        ce_source: '/subscription-platform/graph-registry',
        'content-type': 'application/json',
      });
    }
    const [first, second, third] = collector.events;
    expect(first!.value).toMatchObject({ previousVersion: null, rollbackOf: null, changes: { breaking: 0, dangerous: 0, safe: 0 } });
    expect(second!.value).toMatchObject({ previousVersion: 1, changes: { breaking: 1, dangerous: 0, safe: 1 } });
    const { sha256 } = (await api.get(1)).json as { sha256: string };
    expect(third!.value).toMatchObject({ previousVersion: 2, rollbackOf: 1, sha256 });
  }, 60_000);
});

/** A replica's real publisher, each event held back a while first (a slower path to the broker than the other replica's). */
function slowed(events: EventPublisher, maxDelayMs: number): EventPublisher {
  return { ...events, publish: async (topic, event) => (await sleep(Math.random() * maxDelayMs), events.publish(topic, event)) };
}

/** A replica's real publisher whose first `failures` publishes fail, as with a broker out of reach. */
function failingFirst(events: EventPublisher, failures: number): EventPublisher {
  let left = failures;
  return { ...events, publish: (topic, event) => (left-- > 0 ? Promise.reject(new Error('broker unavailable')) : events.publish(topic, event)) };
}

describe('SchemaPublishedEvent from two replicas', () => {
  const PUBLISHES = 30;
  const redises: PrivateRedis[] = [];
  const publishers: EventPublisher[] = [];
  const collectors: EventCollector[] = [];
  const replicas: RunningRegistry[] = [];

  /** Two registry replicas on a Redis of their own, each with its own Kafka producer (`wrap`ped), and a consumer of their topic. */
  async function twoReplicas(wrap: [(events: EventPublisher) => EventPublisher, (events: EventPublisher) => EventPublisher]): Promise<{ apis: Array<ReturnType<typeof versionsApi>>; clients: Array<ReturnType<typeof client>>; collector: EventCollector }> {
    const topic = `schema-changes-test-${randomUUID()}`;
    const redis = await startPrivateRedis();
    redises.push(redis);
    const collector = await collectEvents([topic]);
    collectors.push(collector);
    const started = await Promise.all(
      wrap.map(async (wrapper) => {
        const events = createKafkaPublisher({ brokers: infra('KAFKA_BROKERS').split(','), clientId: 'graph-registry-test', source: '/subscription-platform/graph-registry', logger: silentLogger });
        publishers.push(events);
        const replica = await startRegistry({ kind: 'redis', url: redis.url }, undefined, { schemaPublishing: { ...DEFAULT_SCHEMA_PUBLISHING, topic }, events: wrapper(events) });
        replicas.push(replica);
        return client(replica.baseUrl);
      }),
    );
    return { apis: started.map((api) => versionsApi(api)), clients: started, collector };
  }

  afterEach(async () => {
    await Promise.all(replicas.splice(0).map((replica) => replica.close()));
    await Promise.all(publishers.splice(0).map((events) => events.close()));
    await Promise.all(collectors.splice(0).map((collector) => collector.close()));
    await Promise.all(redises.splice(0).map((redis) => redis.stop()));
  });

  it(`should send the events of ${PUBLISHES} concurrent publishes through two replicas in version order, none lost, none twice`, async () => {
    const { apis, collector } = await twoReplicas([(events) => slowed(events, 50), (events) => events]);
    const answers = await Promise.all(Array.from({ length: PUBLISHES }, (_, i) => apis[i % 2]!.publish(schemaNumber(i + 1))));
    expect(answers.map((answer) => answer.status)).toEqual(Array.from({ length: PUBLISHES }, () => 201));
    await collector.waitFor((event) => event.value.version === PUBLISHES);
    await sleep(1000); // an event sent twice or late would be here by now
    const consumed = collector.events.map((event) => event.value.version);
    expect(consumed).toEqual(Array.from({ length: PUBLISHES }, (_, i) => i + 1));
    // Each event describes the version it names, whichever replica stored it.
    const stored = await apis[0]!.list('?limit=100');
    for (const event of collector.events) expect(event.value.sha256).toBe(stored.versions.find((version) => version.version === event.value.version)!.sha256);
  }, 120_000);

  it('should send a version whose event could not be sent before the next one, from the other replica', async () => {
    const { apis, collector } = await twoReplicas([(events) => failingFirst(events, 1), (events) => events]);
    expect((await apis[0]!.publish(schemaNumber(1))).status).toBe(201);
    expect((await apis[1]!.publish(schemaNumber(2))).status).toBe(201);
    await collector.waitFor((event) => event.value.version === 2);
    await sleep(500);
    expect(collector.events.map((event) => event.value.version)).toEqual([1, 2]);
  }, 60_000);

  it('should send the events of subgraph publishes through two replicas in supergraph version order, with their graph, and none for a removal', async () => {
    const { clients, collector } = await twoReplicas([(events) => slowed(events, 50), (events) => events]);
    const [a, b] = clients as [ReturnType<typeof client>, ReturnType<typeof client>];
    for (const name of ['user', 'product', 'payment']) expect((await a.registerGraph(name, `http://${name}.shop.svc.cluster.local:4000/graphql`)).status).toBe(204);
    const publish = (api: typeof a, name: string, sdl: string) => api.send({ method: 'POST', path: `/${name}/schema`, headers: { 'content-type': 'application/graphql' }, body: sdl });
    // The user subgraph first (the others extend its types), then the rest at once through both replicas.
    expect((await publish(a, 'user', subgraphSdl('user'))).status).toBe(201);
    const field = (n: number) => subgraphSdl('user').replace('  name: String!\n', `  name: String!\n  extra${n}: Int\n`);
    const answers = await Promise.all([publish(b, 'product', subgraphSdl('product')), publish(a, 'payment', subgraphSdl('payment')), ...[1, 2, 3, 4].map((n) => publish(n % 2 === 0 ? a : b, 'user', field(n)))]);
    expect(answers.map((answer) => answer.status)).toEqual([201, 201, 201, 201, 201, 201]);
    expect((await b.send({ method: 'DELETE', path: '/payment/schema' })).status).toBe(204);
    expect((await publish(a, 'payment', subgraphSdl('payment'))).status).toBe(201);
    await collector.waitFor((event) => event.value.supergraphVersion === 9);
    await sleep(1000); // an event sent twice, late or for the removal would be here by now
    const consumed = collector.events.map((event) => [event.value.supergraphVersion, event.value.graph, event.value.version] as const);
    // Supergraph version 8 is the removal: no event. Each event once; a graph's events (one key, one partition) in order.
    expect(consumed.map(([supergraph]) => supergraph).sort((x, y) => Number(x) - Number(y))).toEqual([1, 2, 3, 4, 5, 6, 7, 9]);
    const user = consumed.filter(([, graph]) => graph === 'user');
    expect(user.map(([, , version]) => version)).toEqual([1, 2, 3, 4, 5]);
    expect(user.map(([supergraph]) => supergraph)).toEqual([...user.map(([supergraph]) => supergraph)].sort((x, y) => Number(x) - Number(y)));
    expect(consumed.filter(([, graph]) => graph === 'payment').map(([supergraph, , version]) => [supergraph, version])).toEqual([[expect.any(Number), 1], [9, 2]]);
    for (const event of collector.events) {
      expectEventPayload('SchemaPublishedEvent', event.value);
      expect(event.key).toBe(`graph:schema:${String(event.value.graph)}`);
    }
  }, 120_000);
});
