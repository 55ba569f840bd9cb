import type { z } from 'zod';
import { checkoutSessionAsyncPaymentSucceeded, checkoutSessionCompleted } from './checkout-actions.js';
import { checkoutSessionSchema, deletedObjectSchema, parseObject, priceSchema, productSchema, type Envelope } from './event-schemas.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-action.js';
import { priceCreated, priceDeleted, priceUpdated } from './price-actions.js';
import { productCreated, productDeleted, productUpdated } from './product-actions.js';

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
