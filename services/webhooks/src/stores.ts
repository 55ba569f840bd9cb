import { parseRedisUrl } from '@sp/core';
import type { Logger } from '@sp/observability';
import { connectRedis } from '@sp/storage';
import type { WebhooksConfig } from './config.js';
import { STRIPE_RETRY_WINDOW_MS, type EventLog } from './events/event-log.js';
import type { ProcessingStore } from './events/processing-store.js';
import { createMemoryProcessingStore } from './events/memory-processing-store.js';
import { createMemoryEventLog } from './events/memory-event-log.js';
import { createMemoryReconcileState } from './payments/memory-reconcile-state.js';
import type { ReconcileState } from './payments/reconcile-state.js';
import { createRedisProcessingStore } from './events/redis-processing-store.js';
import { createRedisEventLog } from './events/redis-event-log.js';
import { createRedisReconcileState } from './payments/redis-reconcile-state.js';

/** What the service keeps in STORE_URL, shared by the replicas. */
export interface Stores {
  /** Processed events, checkout sessions fulfilled, object versions, SMS message ids. */
  processing: ProcessingStore;
  eventLog: EventLog;
  reconcile: ReconcileState;
}

/** Key prefixes in Redis; each store's own by default (tests give each run its own). */
export interface StorePrefixes {
  processing?: string;
  eventLog?: string;
  reconcile?: string;
}

/**
 * The stores chosen by configuration (STORE_URL, the event log's bounds), on one Redis connection
 * (closed by `processing.close()`); the memory ones warn, since they are for local runs only.
 */
export function createStores(config: Pick<WebhooksConfig, 'store' | 'eventLog'>, runtime: { logger: Logger; now: () => number }, prefixes: StorePrefixes = {}): Stores {
  const { logger, now } = runtime;
  const eventLogOptions = { ...config.eventLog, retryWindowMs: STRIPE_RETRY_WINDOW_MS, now };
  if (config.store.kind === 'redis') {
    const connection = connectRedis(parseRedisUrl(config.store.url));
    return {
      processing: createRedisProcessingStore(connection, logger, prefixes.processing),
      eventLog: createRedisEventLog(connection, eventLogOptions, prefixes.eventLog),
      reconcile: createRedisReconcileState(connection, prefixes.reconcile),
    };
  }
  logger.warn('STORE_URL is memory://: processed payment events, the event log and SMS are remembered in this process only; use redis:// outside local runs');
  return { processing: createMemoryProcessingStore(now), eventLog: createMemoryEventLog(eventLogOptions), reconcile: createMemoryReconcileState(now) };
}
