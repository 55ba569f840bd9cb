import { checkoutSessionAsyncPaymentSucceeded, checkoutSessionCompleted } from './checkout-actions.js';
import { checkoutSessionSchema, deletedObjectSchema, priceSchema, productSchema } from './event-schemas.js';
import { eventHandler, type PaymentEventHandler } from './payment-event-action.js';
import { priceCreated, priceDeleted, priceUpdated } from './price-actions.js';
import { productCreated, productDeleted, productUpdated } from './product-actions.js';

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

export const handledEventTypes: readonly string[] = [...paymentEventActions.keys()];
