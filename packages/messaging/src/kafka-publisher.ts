import { randomUUID } from 'node:crypto';
import { Kafka, logLevel, type Producer, type IHeaders } from 'kafkajs';
import { context, propagation } from '@opentelemetry/api';
import { Counter, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { withDeadline } from '@sp/core';
import { unavailable } from '@sp/core';
import { createSerialSender } from './serial-sender.js';

/** An event as the services see it: a name, a partition key and camelCase JSON fields. */
export interface PlatformEvent {
  /** The event name, e.g. `UserLoggedInEvent`; becomes the CloudEvents `ce_type`. */
  type: string;
  /** Kafka message key: the phone number or the provider object id, so related events keep their order. */
  key: string;
  data: Record<string, unknown>;
  /** Stable id for de-duplication by consumers; a fresh UUID when omitted. */
  id?: string;
}

export interface EventPublisher {
  publish(topic: string, event: PlatformEvent): Promise<void>;
  /** Readiness: rejects when the broker cannot be reached. */
  check(): Promise<void>;
  close(): Promise<void>;
}

export interface KafkaPublisherOptions {
  brokers: readonly string[];
  clientId: string;
  /** CloudEvents `ce_source`, e.g. `/subscription-platform/auth`. */
  source: string;
  logger: Logger;
  registry?: Registry;
  /** Upper bound for one publish, retries included; past it the caller gets a 503. */
  publishTimeoutMs?: number;
  /**
   * The topic and event type pairs this publisher sends. Their published and failure counters
   * exist at 0 from the start, so a first failure is an increase Prometheus sees (increase() and
   * rate() need a sample before it) and the dashboards' panels show 0 rather than "No data".
   */
  events?: ReadonlyArray<{ topic: string; type: string }>;
}

/** CloudEvents Kafka binding (binary mode) headers plus the W3C trace context of the caller. */
export function cloudEventHeaders(event: PlatformEvent, source: string, now = new Date()): IHeaders {
  const headers: Record<string, string> = {
    ce_specversion: '1.0',
    ce_type: event.type,
    ce_id: event.id ?? randomUUID(),
    ce_source: source,
    ce_time: now.toISOString(),
    'content-type': 'application/json',
  };
  propagation.inject(context.active(), headers);
  return headers;
}

const MAX_RETRY_WAIT_MS = 1000;

/**
 * kafkajs retries a fixed number of times; a fixed small count gave up after ~6 s, before a
 * cluster had moved a dead broker's partitions (broker.session.timeout.ms, 9 s by default) and
 * while the publish deadline still had time. Enough retries to fill the deadline (waits of 100,
 * 200, 400, 800 ms, then 1 s each), so the deadline alone decides when a publish gives up.
 */
function retryUntil(timeoutMs: number): { retries: number; initialRetryTime: number; maxRetryTime: number } {
  return { retries: 4 + Math.ceil(timeoutMs / MAX_RETRY_WAIT_MS), initialRetryTime: 100, maxRetryTime: MAX_RETRY_WAIT_MS };
}

/**
 * Publishes platform events with an idempotent producer (acks=all), one send in flight at a
 * time (see serial-sender.ts). A publish either reaches the in-sync replicas or rejects with a
 * 503 within the deadline, so callers can refuse the request instead of losing the event.
 */
export function createKafkaPublisher(options: KafkaPublisherOptions): EventPublisher {
  const timeoutMs = options.publishTimeoutMs ?? 10_000;
  const kafka = new Kafka({
    clientId: options.clientId,
    brokers: [...options.brokers],
    connectionTimeout: 3000,
    requestTimeout: Math.min(timeoutMs, 30_000),
    retry: retryUntil(timeoutMs),
    logLevel: logLevel.NOTHING,
  });
  const failures = options.registry
    ? new Counter({ name: 'kafka_publish_failures_total', help: 'Events that could not be published', labelNames: ['topic', 'type'], registers: [options.registry] })
    : undefined;
  const published = options.registry
    ? new Counter({ name: 'kafka_events_published_total', help: 'Events published', labelNames: ['topic', 'type'], registers: [options.registry] })
    : undefined;
  for (const labels of options.events ?? []) {
    failures?.inc(labels, 0);
    published?.inc(labels, 0);
  }
  let producer: Producer | undefined;
  let connecting: Promise<Producer> | undefined;

  const connected = (): Promise<Producer> => {
    if (producer) return Promise.resolve(producer);
    connecting ??= (async () => {
      const p = kafka.producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: true });
      p.on(p.events.DISCONNECT, () => {
        if (producer === p) producer = undefined;
      });
      try {
        await p.connect();
        producer = p;
        return p;
      } catch (err) {
        await p.disconnect().catch(() => undefined);
        throw err;
      } finally {
        connecting = undefined;
      }
    })();
    return connecting;
  };
  const sender = createSerialSender(connected);

  return {
    async publish(topic, event) {
      try {
        const queued = sender.send(topic, { key: event.key, value: JSON.stringify(event.data), headers: cloudEventHeaders(event, options.source) });
        await withDeadline(queued.done, timeoutMs, { what: 'publish', onTimeout: () => queued.abandon() });
        published?.inc({ topic, type: event.type });
      } catch (err) {
        failures?.inc({ topic, type: event.type });
        options.logger.error({ err, topic, type: event.type }, 'event publish failed');
        throw unavailable('message broker', err);
      }
    },
    async check() {
      const admin = kafka.admin();
      try {
        await withDeadline(admin.connect().then(() => admin.describeCluster()), 2000, { what: 'broker check' });
      } finally {
        await admin.disconnect().catch(() => undefined);
      }
    },
    async close() {
      const p = producer ?? (await connecting?.catch(() => undefined));
      producer = undefined;
      await p?.disconnect();
    },
  };
}
