import { checkoutSessionAsyncPaymentSucceeded, checkoutSessionCompleted } from './checkout-actions.js';
import type { PaymentEventAction } from './payment-event-action.js';
import { priceCreated, priceDeleted, priceUpdated } from './price-actions.js';
import { productCreated, productDeleted, productUpdated } from './product-actions.js';

/** The payment provider event types the service handles; every other type is acknowledged and ignored. */
export const paymentEventActions: ReadonlyMap<string, PaymentEventAction> = new Map([
  ['checkout.session.completed', checkoutSessionCompleted],
  ['checkout.session.async_payment_succeeded', checkoutSessionAsyncPaymentSucceeded],
  ['product.created', productCreated],
  ['product.updated', productUpdated],
  ['product.deleted', productDeleted],
  ['price.created', priceCreated],
  ['price.updated', priceUpdated],
  ['price.deleted', priceDeleted],
]);

export const handledEventTypes: readonly string[] = [...paymentEventActions.keys()];
