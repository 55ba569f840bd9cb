import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { createKafkaPublisher, type EventPublisher } from '@sp/platform';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import { sleep } from '../../../test/support/eventually.js';
import { infra } from '../../../test/support/infra.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { DEFAULT_SCHEMA_PUBLISHING } from '../src/schemas/schema-publisher.js';
import { client, silentLogger, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { schemaNumber, versionsApi } from './support/versions-client.js';

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
  }, 60_000);

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
