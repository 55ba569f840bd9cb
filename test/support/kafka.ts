import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';
import { infra } from './infra.js';

/** A consumed message in the shape tests assert on. */
export interface ConsumedEvent {
  topic: string;
  key: string | undefined;
  value: Record<string, unknown>;
  headers: Record<string, string>;
}

export interface EventCollector {
  events: ConsumedEvent[];
  /** Resolves with the first event (already seen or still to come) matching `predicate`. */
  waitFor(predicate: (event: ConsumedEvent) => boolean, timeoutMs?: number): Promise<ConsumedEvent>;
  close(): Promise<void>;
}

/**
 * Consumes the given topics from the shared test broker with a fresh consumer group, from the
 * beginning, so a test can wait for the events the service under test published.
 */
export async function collectEvents(topics: string[], brokers = infra('KAFKA_BROKERS').split(',')): Promise<EventCollector> {
  const kafka = new Kafka({ clientId: 'test-collector', brokers, logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: topics.map((topic) => ({ topic, numPartitions: 1 })) }).catch(() => undefined);
  await admin.disconnect();
  const consumer: Consumer = kafka.consumer({ groupId: `test-${randomUUID()}`, maxWaitTimeInMs: 200 });
  const events: ConsumedEvent[] = [];
  const waiters = new Set<() => void>();
  await consumer.connect();
  await consumer.subscribe({ topics, fromBeginning: true });
  await consumer.run({
    eachMessage: ({ topic, message }) => {
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]));
      events.push({ topic, key: message.key?.toString(), value: JSON.parse(message.value?.toString() ?? 'null') as Record<string, unknown>, headers });
      for (const wake of waiters) wake();
      return Promise.resolve();
    },
  });
  return {
    events,
    waitFor(predicate, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        const check = (): boolean => {
          const found = events.find(predicate);
          if (found) {
            waiters.delete(wake);
            clearTimeout(timer);
            resolve(found);
          }
          return found !== undefined;
        };
        const wake = (): void => void check();
        const timer = setTimeout(() => {
          waiters.delete(wake);
          reject(new Error(`no matching event on ${topics.join(', ')} within ${timeoutMs} ms (saw ${events.length})`));
        }, timeoutMs);
        waiters.add(wake);
        check();
      });
    },
    close: () => consumer.disconnect(),
  };
}
