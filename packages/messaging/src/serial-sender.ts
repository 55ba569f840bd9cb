import type { Message, Producer, TopicMessages } from 'kafkajs';

/** One queued event; `abandoned` once its caller gave up (deadline), so it is not sent any more. */
interface Pending {
  topic: string;
  message: Message;
  abandoned: boolean;
  settle(err?: unknown): void;
}

export interface QueuedSend {
  /** Resolves once the brokers acknowledged the batch holding the event (acks=all). */
  done: Promise<void>;
  /** The caller gave up: drop the event if it has not gone out yet (once sent, it may still be written). */
  abandon(): void;
}

export interface SerialSender {
  send(topic: string, message: Message): QueuedSend;
}

/** Bounds one produce request; events are small (a few hundred bytes). */
const MAX_BATCH = 500;

function byTopic(batch: readonly Pending[]): TopicMessages[] {
  const topics = new Map<string, Message[]>();
  for (const { topic, message } of batch) {
    const messages = topics.get(topic) ?? [];
    messages.push(message);
    topics.set(topic, messages);
  }
  return [...topics].map(([topic, messages]) => ({ topic, messages }));
}

/** The events still wanted; the abandoned ones settle (their callers already had a 503). */
function dropAbandoned(queue: readonly Pending[]): Pending[] {
  for (const pending of queue) if (pending.abandoned) pending.settle(new Error('abandoned before it was sent'));
  return queue.filter((pending) => !pending.abandoned);
}

/**
 * One kafkajs send in flight at a time; the events queued meanwhile go out together in the next.
 *
 * Why: kafkajs' idempotent producer numbers a partition's batches under a lock per broker, and
 * hands a failed batch's sequence numbers back. Concurrent sends that meet a leader change (the
 * partition moves to another broker mid-flight) then reuse a sequence number for a different
 * event, which the new leader acknowledges as a duplicate of the earlier one without writing it:
 * an acknowledged event lost (seen in kafka-failover.test.ts). Within one send kafkajs retries
 * the same batch with the same numbers, which the broker de-duplicates correctly.
 */
export function createSerialSender(producer: () => Promise<Producer>): SerialSender {
  let queue: Pending[] = [];
  let sending = false;

  const sendOne = async (batch: Pending[]): Promise<void> => {
    try {
      const p = await producer();
      await p.sendBatch({ acks: -1, topicMessages: byTopic(batch) });
      for (const pending of batch) pending.settle();
    } catch (err) {
      for (const pending of batch) pending.settle(err);
    }
  };

  const pump = async (): Promise<void> => {
    if (sending) return;
    sending = true;
    try {
      while (queue.length > 0) {
        const live = dropAbandoned(queue);
        queue = live.slice(MAX_BATCH);
        if (live.length > 0) await sendOne(live.slice(0, MAX_BATCH));
      }
    } finally {
      sending = false;
    }
  };

  return {
    send(topic, message) {
      let settle!: (err?: unknown) => void;
      const done = new Promise<void>((resolve, reject) => {
        settle = (err) => (err === undefined ? resolve() : reject(err instanceof Error ? err : new Error('send failed', { cause: err })));
      });
      const pending: Pending = { topic, message, abandoned: false, settle };
      queue.push(pending);
      void pump();
      return { done, abandon: () => void (pending.abandoned = true) };
    },
  };
}
