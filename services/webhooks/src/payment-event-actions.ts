import type { z } from 'zod';
import type { EventPublisher, Logger } from '@sp/platform';
import type { DedupStore } from './dedup-store.js';
import type { Topics } from './events.js';
import type { Gateway } from './gateway.js';
import type { PaymentProvider } from './payment-provider.js';
import type { ProcessOnceOptions } from './process-once.js';
import { checkoutSessionAsyncPaymentSucceeded, checkoutSessionCompleted } from './checkout-actions.js';
import { checkoutSessionSchema, deletedObjectSchema, parseObject, priceSchema, productSchema, type Envelope, type ValidEvent } from './event-schemas.js';
import { priceCreated, priceDeleted, priceUpdated } from './price-actions.js';
import { productCreated, productDeleted, productUpdated } from './product-actions.js';

export interface PaymentActionDeps {
  gateway: Gateway;
  paymentProvider: PaymentProvider;
  publisher: EventPublisher;
  topics: Topics;
  logger: Logger;
  /** Processed events, checkout sessions fulfilled, and the applied version of each provider object. */
  dedup: DedupStore;
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

/** A handled event type: its object's schema and its action. */
export interface PaymentEventHandler {
  /** Validates the event's object (400 naming the field) before anything happens, and returns the work to run once. */
  prepare(envelope: Envelope): (deps: PaymentActionDeps) => Promise<ActionResult>;
}

export function eventHandler<T>(schema: z.ZodType<T>, action: PaymentEventAction<T>): PaymentEventHandler {
  return {
    prepare(envelope) {
      const event = parseObject(envelope, schema);
      return (deps) => action(event, deps);
    },
  };
}

/** The payment provider event types the service handles, each with its object's schema; every other type is acknowledged and ignored. */
export const paymentEventActions: ReadonlyMap<string, PaymentEventHandler> = new Map([
  ['checkout.session.completed', eventHandler(checkoutSessionSchema, checkoutSessionCompleted)],
  ['checkout.session.async_payment_succeeded', eventHandler(checkoutSessionSchema, checkoutSessionAsyncPaymentSucceeded)],
  ['product.created', eventHandler(productSchema, productCreated)],
  ['product.updated', eventHandler(productSchema, productUpdated)],
  ['product.deleted', eventHandler(deletedObjectSchema, productDeleted)],
  ['price.created', eventHandler(priceSchema, priceCreated)],
  ['price.updated', eventHandler(priceSchema, priceUpdated)],
  ['price.deleted', eventHandler(deletedObjectSchema, priceDeleted)],
]);
