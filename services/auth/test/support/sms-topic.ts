import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { infra } from '../../../../test/support/infra.js';
import { collectEvents } from '../../../../test/support/kafka.js';

/** A notifications topic of a test's own, to count the SMS events the service published to it. */
export interface SmsTopic {
  topic: string;
  /**
   * The number of every SendSmsNotificationEvent published so far, one entry per event. A POST
   * /otp answers 200 only after the broker acknowledged its event, and a marker written now lands
   * after all of them on the topic's one partition: once the marker is read, every event is.
   */
  recipients(): Promise<string[]>;
  close(): Promise<void>;
}

export async function startSmsTopic(): Promise<SmsTopic> {
  const topic = `otp-fraud-${randomUUID()}`;
  // Creates the topic with one partition, then reads it from the beginning.
  const events = await collectEvents([topic]);
  const kafka = new Kafka({ clientId: 'sms-topic-marker', brokers: infra('KAFKA_BROKERS').split(','), logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  await producer.connect();
  return {
    topic,
    async recipients() {
      const marker = `marker-${randomUUID()}`;
      await producer.send({ topic, messages: [{ key: marker, value: '{}' }] });
      await events.waitFor((event) => event.key === marker);
      return events.events.filter((event) => event.headers.ce_type === 'SendSmsNotificationEvent').map((event) => String(event.value.phoneNumber));
    },
    close: async () => {
      await producer.disconnect();
      await events.close();
    },
  };
}
