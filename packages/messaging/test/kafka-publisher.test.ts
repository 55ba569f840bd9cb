import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from '@jest/globals';
import { Kafka, logLevel, type KafkaMessage } from 'kafkajs';
import { createKafkaPublisher } from '../src/kafka-publisher.js';
import { createLogger } from '@sp/observability';
import { createRegistry } from '@sp/observability';
import { infra } from '../../../test/support/infra.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const brokers = infra('KAFKA_BROKERS').split(',');
const kafka = new Kafka({ clientId: 'platform-test', brokers, logLevel: logLevel.NOTHING });
const closers: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const close of closers) await close();
});

async function consumeOne(topic: string): Promise<KafkaMessage> {
  const consumer = kafka.consumer({ groupId: `test-${randomUUID()}` });
  closers.push(() => consumer.disconnect());
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  return new Promise((resolve) => {
    void consumer.run({ eachMessage: ({ message }) => Promise.resolve(resolve(message)) });
  });
}

const header = (message: KafkaMessage, name: string): string | undefined => message.headers?.[name]?.toString();

describe('Kafka publisher (real broker)', () => {
  it('should publish an event that a kafkajs consumer reads back with CloudEvents headers', async () => {
    const topic = `platform-test-${randomUUID()}`;
    const registry = createRegistry('test');
    const publisher = createKafkaPublisher({ brokers, clientId: 'platform-test', source: '/subscription-platform/test', logger, registry });
    closers.push(() => publisher.close());

    await publisher.publish(topic, { type: 'UserLoggedInEvent', key: '+15551234567', data: { phoneNumber: '+15551234567', locale: 'de' } });
    const message = await consumeOne(topic);

    expect(message.key?.toString()).toBe('+15551234567');
    expect(JSON.parse(message.value!.toString())).toEqual({ phoneNumber: '+15551234567', locale: 'de' });
    expect(header(message, 'ce_specversion')).toBe('1.0');
    expect(header(message, 'ce_type')).toBe('UserLoggedInEvent');
    expect(header(message, 'ce_source')).toBe('/subscription-platform/test');
    expect(header(message, 'ce_id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(header(message, 'ce_time')!).getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect(header(message, 'content-type')).toBe('application/json');
    expect(await registry.getSingleMetricAsString('kafka_events_published_total')).toContain('type="UserLoggedInEvent",service="test"} 1');
  });

  it('should answer the readiness check while the broker is up', async () => {
    const publisher = createKafkaPublisher({ brokers, clientId: 'platform-test', source: '/test', logger });
    closers.push(() => publisher.close());
    await expect(publisher.check()).resolves.toBeUndefined();
  });

  it('should reject with 503 within the deadline when no broker answers', async () => {
    const publisher = createKafkaPublisher({ brokers: ['127.0.0.1:1'], clientId: 'platform-test', source: '/test', logger, publishTimeoutMs: 1500 });
    closers.push(() => publisher.close());
    const started = Date.now();
    await expect(publisher.publish('nowhere', { type: 'X', key: 'k', data: {} })).rejects.toMatchObject({ status: 503, message: 'message broker is unavailable' });
    expect(Date.now() - started).toBeLessThan(5000);
    await expect(publisher.check()).rejects.toThrow();
  });

  it('should count its known events at 0 from the start, and a failed publish as 1 of them', async () => {
    const registry = createRegistry('test');
    const events = [{ topic: 'notifications', type: 'SendSmsNotificationEvent' }];
    const publisher = createKafkaPublisher({ brokers: ['127.0.0.1:1'], clientId: 'platform-test', source: '/test', logger, registry, publishTimeoutMs: 500, events });
    closers.push(() => publisher.close());
    const series = async (name: string): Promise<string[]> => (await registry.getSingleMetricAsString(name)).split('\n').filter((line) => !line.startsWith('#'));
    expect(await series('kafka_publish_failures_total')).toEqual(['kafka_publish_failures_total{topic="notifications",type="SendSmsNotificationEvent",service="test"} 0']);
    expect(await series('kafka_events_published_total')).toEqual(['kafka_events_published_total{topic="notifications",type="SendSmsNotificationEvent",service="test"} 0']);
    await expect(publisher.publish('notifications', { type: 'SendSmsNotificationEvent', key: 'k', data: {} })).rejects.toMatchObject({ status: 503 });
    expect(await series('kafka_publish_failures_total')).toEqual(['kafka_publish_failures_total{topic="notifications",type="SendSmsNotificationEvent",service="test"} 1']);
  });
});
