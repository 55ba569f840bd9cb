import type { Logger } from '@sp/observability';
import type { EventPublisher } from '@sp/messaging';
import type { ProcessingStore } from '../events/processing-store.js';
import type { ValidEvent } from './event-schemas.js';
import type { Topics } from '../topics.js';
import type { GatewayPort } from '../gateway/gateway-port.js';
import type { PaymentProvider } from './payment-provider.js';
import type { ProcessOnceOptions } from '../events/process-once.js';

// What a payment event action is and what it may use: every action imports this module, and the
// dispatch table (payment-event-actions.ts) imports every action, so it stands on its own.

export interface PaymentActionDeps {
  gateway: GatewayPort;
  paymentProvider: PaymentProvider;
  publisher: EventPublisher;
  topics: Topics;
  logger: Logger;
  /** Processed events, checkout sessions fulfilled, and the applied version of each provider object. */
  processing: ProcessingStore;
  processOnceOptions?: ProcessOnceOptions;
}

/**
 * `processed`: the event's changes are made; `deferred`: nothing to do yet (a checkout whose
 * payment is still pending; its `async_payment_succeeded` event will come); `duplicate`: what the
 * event asks for was done already by another event (a checkout session fulfilled once);
 * `stale`: the event is older than what was applied to its object, or its object was deleted.
 */
export type ActionResult = 'processed' | 'deferred' | 'duplicate' | 'stale';

/**
 * What one payment provider event type does with its validated event. Every action must be
 * idempotent: it may run again for the same event after a failure part-way (the gateway's create
 * mutations take the provider's object id as a natural key, updates set absolute values, deletes
 * of an absent record are no-ops).
 */
export type PaymentEventAction<T> = (event: ValidEvent<T>, deps: PaymentActionDeps) => Promise<ActionResult>;
