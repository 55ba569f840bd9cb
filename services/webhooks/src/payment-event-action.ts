import type { EventPublisher, Logger } from '@sp/platform';
import type { Topics } from './events.js';
import type { Gateway } from './gateway.js';
import type { PaymentProvider, ProviderEvent } from './payment-provider.js';

export interface PaymentActionDeps {
  gateway: Gateway;
  paymentProvider: PaymentProvider;
  publisher: EventPublisher;
  topics: Topics;
  logger: Logger;
}

/**
 * `processed`: the event's changes are made; `deferred`: nothing to do yet (a checkout whose
 * payment is still pending; its `async_payment_succeeded` event will come).
 */
export type ActionResult = 'processed' | 'deferred';

/**
 * What one payment provider event type does. Every action must be idempotent: it may run again
 * for the same event after a failure part-way (the gateway's create mutations take the provider's
 * object id as a natural key, updates set absolute values, deletes of an absent record are no-ops).
 */
export type PaymentEventAction = (event: ProviderEvent, deps: PaymentActionDeps) => Promise<ActionResult>;
