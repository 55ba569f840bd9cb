import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ConfigResourceTypes, Kafka, logLevel, type Admin } from 'kafkajs';
import { createKafkaPublisher, type EventPublisher } from '../src/kafka-publisher.js';
import { createLogger } from '@sp/observability';
import { eventually } from '../../../test/support/eventually.js';
import { startKafkaCluster, type KafkaCluster } from '../../../test/support/kafka-cluster.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const EVENTS = 2000;
const CONCURRENCY = 16;

let cluster: KafkaCluster;
let kafka: Kafka;
let admin: Admin;
const closers: Array<() => Promise<void>> = [];
/** Created by the failover test, used again once a second broker is gone (no new topic can be made then). */
const failoverTopic = `failover-${randomUUID()}`;

beforeAll(async () => {
  cluster = await startKafkaCluster();
  kafka = new Kafka({ clientId: 'failover-test', brokers: [...cluster.brokers], logLevel: logLevel.NOTHING });
  admin = kafka.admin();
  await admin.connect();
}, HANG_GUARD_MS);

afterAll(async () => {
  for (const close of closers.reverse()) await close().catch(() => undefined);
  await admin?.disconnect();
  await cluster?.stop();
}, 60_000);

/**
 * The test cluster fences a dead broker after 7 s (broker.session.timeout.ms; Kafka's default is
 * 9 s); docs/scaling.md asks for a publish deadline a few seconds above that.
 */
const PUBLISH_TIMEOUT_MS = 15_000;

function publisherFor(clientId: string, publishTimeoutMs = PUBLISH_TIMEOUT_MS): EventPublisher {
  const publisher = createKafkaPublisher({ brokers: cluster.brokers, clientId, source: '/subscription-platform/test', logger, publishTimeoutMs });
  closers.push(() => publisher.close());
  return publisher;
}

/** The node leading most partitions of `topic`: killing it moves the most leaders. */
async function busiestLeader(topic: string): Promise<number> {
  const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
  const counts = new Map<number, number>();
  for (const partition of meta!.partitions) counts.set(partition.leader, (counts.get(partition.leader) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

interface Read {
  n: number;
  ceId: string;
}

/** Reads `topic` from the beginning with a fresh group until `done` says so. */
async function readAll(topic: string, done: (reads: readonly Read[]) => boolean, timeoutMs: number): Promise<Read[]> {
  const consumer = kafka.consumer({ groupId: `failover-${randomUUID()}`, maxWaitTimeInMs: 200 });
  closers.push(() => consumer.disconnect());
  const reads: Read[] = [];
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  await consumer.run({
    eachMessage: ({ message }) => {
      const { n } = JSON.parse(message.value!.toString()) as { n: number };
      reads.push({ n, ceId: message.headers!['ce_id']!.toString() });
      return Promise.resolve();
    },
  });
  // On a timeout the assertions below name what is missing.
  await eventually(() => done(reads), timeoutMs, `reading ${topic}`).catch(() => undefined);
  await consumer.disconnect();
  return reads;
}

describe('Kafka publisher on a three-broker cluster', () => {
  it('should create its topics replicated three times with min.insync.replicas=2', async () => {
    const topic = `failover-create-${randomUUID()}`;
    await publisherFor('failover-create').publish(topic, { type: 'TestEvent', key: 'k', data: { n: 0 } });

    const [meta] = (await admin.fetchTopicMetadata({ topics: [topic] })).topics;
    expect(meta!.partitions.map((partition) => partition.replicas.length)).toEqual([3, 3, 3]);
    const described = await admin.describeConfigs({ includeSynonyms: false, resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ['min.insync.replicas'] }] });
    expect(described.resources[0]!.configEntries.find((entry) => entry.configName === 'min.insync.replicas')?.configValue).toBe('2');
  });

  it('should lose no event when a broker is SIGKILLed while 2,000 events are published', async () => {
    const topic = failoverTopic;
    const publisher = publisherFor('failover-publish');
    // The topic exists (and has leaders) before the traffic starts.
    await publisher.publish(topic, { type: 'TestEvent', key: 'warm-up', data: { n: -1 } });
    const victim = await busiestLeader(topic);

    const acknowledged = new Set<number>();
    const failures: string[] = [];
    let next = 0;
    let killed: Promise<void> | undefined;
    const caller = async (): Promise<void> => {
      for (let n = next++; n < EVENTS; n = next++) {
        if (n === EVENTS / 4) killed = cluster.kill(victim);
        await publisher.publish(topic, { type: 'TestEvent', key: `customer-${n % 50}`, data: { n } }).then(
          () => acknowledged.add(n),
          (err: unknown) => failures.push(`${n}: ${String((err as Error).cause ?? err)}`),
        );
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, caller));
    await killed;

    // Every publish was acknowledged: the publisher rode out the failover within its deadline.
    expect(failures).toEqual([]);
    expect(acknowledged.size).toBe(EVENTS);
    expect(cluster.nodes.find((node) => node.nodeId === victim)!.alive()).toBe(false);

    const seen = (reads: readonly Read[]): Set<number> => new Set(reads.map((read) => read.n));
    const reads = await readAll(topic, (r) => seen(r).size === EVENTS + 1, 30_000);
    const readNs = seen(reads);
    const missing = Array.from({ length: EVENTS }, (_, n) => n).filter((n) => !readNs.has(n));
    expect(missing).toEqual([]);
    // A duplicate (a retry the broker could not recognise) is the same event: same ce_id.
    const idsOf = new Map<number, Set<string>>();
    for (const { n, ceId } of reads) idsOf.set(n, (idsOf.get(n) ?? new Set()).add(ceId));
    expect([...idsOf.values()].filter((ids) => ids.size > 1)).toEqual([]);
    expect(new Set(reads.map((read) => read.ceId)).size).toBe(EVENTS + 1);
  }, 120_000);

  it('should refuse a publish with 503 within its deadline when only one broker is left', async () => {
    // Runs after the failover test: one broker is already dead; a second one leaves fewer
    // in-sync replicas than min.insync.replicas=2 (and no controller quorum).
    const victim = cluster.nodes.find((node) => node.alive())!.nodeId;
    await cluster.kill(victim);
    const publisher = publisherFor('failover-refuse', 3000);
    const topic = failoverTopic;

    const started = Date.now();
    const outcomes = await Promise.allSettled(
      Array.from({ length: 6 }, (_, n) => publisher.publish(topic, { type: 'TestEvent', key: `customer-${n}`, data: { n } })),
    );

    expect(cluster.nodes.filter((node) => node.alive())).toHaveLength(1);
    expect(outcomes.map((outcome) => (outcome.status === 'rejected' ? (outcome.reason as { status: number }).status : 'acknowledged'))).toEqual(Array(6).fill(503));
    expect(Date.now() - started).toBeLessThan(3000 + 2000);
  }, 30_000);
});
