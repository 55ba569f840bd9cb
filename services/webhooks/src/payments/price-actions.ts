import { notSynchronized } from '../errors.js';
import type { PriceObject } from './event-schemas.js';
import type { PriceTier } from '../gateway/gateway-port.js';
import type { PaymentActionDeps } from './payment-action.js';
import { productKey } from './product-actions.js';
import { versionedDelete, versionedUpsert, type VersionedObject, type VersionedWrite } from './versioned-object-actions.js';

const priceKey = (priceId: string): string => `price:${priceId}`;

/**
 * Makes the gateway's price tier what `price` says: its amount and active state (archived prices
 * are inactive) when the tier exists, else a new tier of the product's plan (409 while the plan is
 * unknown). A price's currency, interval and product never change at the provider. False when the
 * gateway holds a newer version of the tier (the write was refused).
 */
async function applyPrice(price: PriceObject, tier: PriceTier | null, { version }: VersionedWrite, deps: PaymentActionDeps): Promise<boolean> {
  if (tier !== null) return (await deps.gateway.updatePriceTier(tier.id, { amount: price.unit_amount, active: price.active, providerVersion: version })).applied;
  const plan = await deps.gateway.planByProviderProductId(price.product);
  if (plan === null) throw notSynchronized(`no plan has payment provider product ${price.product}`);
  const write = await deps.gateway.createPriceTier({
    providerPriceId: price.id,
    planId: plan.id,
    amount: price.unit_amount,
    currency: price.currency,
    interval: price.recurring?.interval ?? null,
    active: price.active,
    providerVersion: version,
  });
  return write.applied;
}

/** Prices as tiers of their product's plan; a price of a deleted product is never applied again. */
const prices: VersionedObject<PriceObject, PriceTier> = {
  key: priceKey,
  record: (id, deps) => deps.gateway.priceTierByProviderPriceId(id),
  current: (id, deps) => deps.paymentProvider.retrievePrice(id),
  apply: applyPrice,
  remove: (tier, deps) => deps.gateway.deletePriceTier(tier.id),
  orphaned: async (price, deps) => (await deps.processing.readVersion(productKey(price.product)))?.deleted === true,
};

export const priceCreated = versionedUpsert(prices);
export const priceUpdated = priceCreated;
export const priceDeleted = versionedDelete(prices);
