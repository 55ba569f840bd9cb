import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Consumer } from 'kafkajs';

/** A consumed message: key, JSON value and headers as strings. */
export interface TailedEvent {
  topic: string;
  partition: number;
  offset: string;
  key: string | undefined;
  value: Record<string, unknown>;
  headers: Record<string, string>;
}

export interface EventTail {
  /** Every event published after the tail started, in arrival order. */
  readonly events: readonly TailedEvent[];
  /** The first event (seen or still to come) matching `predicate`. */
  waitFor(what: string, predicate: (event: TailedEvent) => boolean, timeoutMs?: number): Promise<TailedEvent>;
  /** The first `count` events matching `predicate`, once that many arrived. */
  waitForAll(what: string, count: number, predicate: (event: TailedEvent) => boolean, timeoutMs?: number): Promise<TailedEvent[]>;
  close(): Promise<void>;
}

type Offsets = Map<string, bigint>;

const partitionKey = (topic: string, partition: number): string => `${topic}/${partition}`;

/**
 * `fetch` again while the broker answers with a retriable error: a topic another process created a
 * moment ago (a service's first publish) has no leader yet ("not the leader for that
 * topic-partition"), and createTopics, which waits for leaders, failed as the topic existed.
 */
async function offsetsOnceLed<T>(fetch: () => Promise<T>, attempts = 20): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fetch();
    } catch (err) {
      if (attempt >= attempts || !(err instanceof Error && 'retriable' in err && err.retriable === true)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** The end offset of every partition of the topics now; topics that do not exist yet are created. */
async function endOffsets(kafka: Kafka, topics: readonly string[]): Promise<Offsets> {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const existing = new Set(await admin.listTopics());
    const missing = topics.filter((topic) => !existing.has(topic));
    if (missing.length > 0) await admin.createTopics({ topics: missing.map((topic) => ({ topic, numPartitions: 1 })) }).catch(() => undefined);
    const offsets: Offsets = new Map();
    for (const topic of topics) {
      for (const { partition, high } of await offsetsOnceLed(() => admin.fetchTopicOffsets(topic))) offsets.set(partitionKey(topic, partition), BigInt(high));
    }
    return offsets;
  } finally {
    await admin.disconnect();
  }
}

function toEvent(topic: string, partition: number, message: { key: Buffer | null; value: Buffer | null; offset: string; headers?: Record<string, unknown> }): TailedEvent {
  const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([name, value]) => [name, String(value)]));
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(message.value?.toString('utf8') ?? 'null') as Record<string, unknown>;
  } catch {
    value = { unparsable: message.value?.toString('utf8') };
  }
  return { topic, partition, offset: message.offset, key: message.key?.toString('utf8'), value, headers };
}

/**
 * Follows topics from their current end: only what is published after this resolves is seen, so
 * a shared broker's history (and other runs' events) never mix in. Commits nothing (a fresh
 * consumer group that leaves no offsets behind).
 */
export async function tailEvents(brokers: readonly string[], topics: readonly string[]): Promise<EventTail> {
  const kafka = new Kafka({ clientId: 'e2e-journey', brokers: [...brokers], logLevel: logLevel.NOTHING, connectionTimeout: 3000 });
  const start = await endOffsets(kafka, topics);
  const consumer: Consumer = kafka.consumer({ groupId: `e2e-journey-${randomUUID()}`, maxWaitTimeInMs: 100, sessionTimeout: 10_000 });
  const events: TailedEvent[] = [];
  const waiters = new Set<() => void>();
  await consumer.connect();
  await consumer.subscribe({ topics: [...topics], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachMessage: ({ topic, partition, message }) => {
      // Earlier messages are skipped: the seek below may not yet apply to the first fetch.
      if (BigInt(message.offset) < (start.get(partitionKey(topic, partition)) ?? 0n)) return Promise.resolve();
      events.push(toEvent(topic, partition, message));
      for (const wake of waiters) wake();
      return Promise.resolve();
    },
  });
  for (const [key, offset] of start) {
    const slash = key.lastIndexOf('/');
    consumer.seek({ topic: key.slice(0, slash), partition: Number(key.slice(slash + 1)), offset: offset.toString() });
  }

  const waitForAll = (what: string, count: number, predicate: (event: TailedEvent) => boolean, timeoutMs = 20_000): Promise<TailedEvent[]> =>
    new Promise((resolve, reject) => {
      const check = (): void => {
        const found = events.filter(predicate);
        if (found.length < count) return;
        waiters.delete(check);
        clearTimeout(timer);
        resolve(found.slice(0, count));
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(new Error(`${what}: ${events.filter(predicate).length} of ${count} expected event(s) on ${topics.join(', ')} within ${timeoutMs} ms`));
      }, timeoutMs);
      waiters.add(check);
      check();
    });

  return {
    events,
    waitForAll,
    waitFor: async (what, predicate, timeoutMs) => (await waitForAll(what, 1, predicate, timeoutMs))[0]!,
    close: () => consumer.disconnect(),
  };
}
