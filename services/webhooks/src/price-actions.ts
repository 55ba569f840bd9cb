import type Stripe from 'stripe';
import { notSynchronized } from './errors.js';
import type { PaymentEventAction } from './payment-event-action.js';

const productIdOf = (price: Stripe.Price): string => (typeof price.product === 'string' ? price.product : price.product.id);

/** price.created: a price tier of the product's plan (409 while the plan is unknown). */
export const priceCreated: PaymentEventAction = async (event, deps) => {
  const price = event.data.object as Stripe.Price;
  const productId = productIdOf(price);
  const plan = await deps.gateway.planByProviderProductId(productId);
  if (plan === null) throw notSynchronized(`no plan has payment provider product ${productId}`);
  await deps.gateway.createPriceTier({
    providerPriceId: price.id,
    planId: plan.id,
    amount: price.unit_amount,
    currency: price.currency,
    interval: price.recurring?.interval ?? null,
    active: price.active,
  });
  return 'processed';
};

/** price.updated: the tier's amount (409 while the tier is unknown). */
export const priceUpdated: PaymentEventAction = async (event, deps) => {
  const price = event.data.object as Stripe.Price;
  const tier = await deps.gateway.priceTierByProviderPriceId(price.id);
  if (tier === null) throw notSynchronized(`no price tier has payment provider price ${price.id}`);
  await deps.gateway.updatePriceTier(tier.id, { amount: price.unit_amount });
  return 'processed';
};

/** price.deleted: delete the tier; already gone is fine. */
export const priceDeleted: PaymentEventAction = async (event, deps) => {
  const price = event.data.object as Stripe.Price;
  const tier = await deps.gateway.priceTierByProviderPriceId(price.id);
  if (tier !== null) await deps.gateway.deletePriceTier(tier.id);
  return 'processed';
};
