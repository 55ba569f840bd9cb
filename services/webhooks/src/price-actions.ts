import { notSynchronized } from './errors.js';
import type { DeletedObject, PriceObject, ValidEvent } from './event-schemas.js';
import type { PriceTier } from './gateway.js';
import { orderOf, recordApplied, recordDeleted, withObjectVersion } from './object-order.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-event-action.js';
import { productKey } from './product-actions.js';

const priceKey = (priceId: string): string => `price:${priceId}`;

/**
 * Makes the gateway's price tier what `price` says: its amount and active state (archived prices
 * are inactive) when the tier exists, else a new tier of the product's plan (409 while the plan is
 * unknown). A price's currency, interval and product never change at the provider.
 */
async function applyPrice(price: PriceObject, tier: PriceTier | null, deps: PaymentActionDeps): Promise<void> {
  if (tier !== null) {
    await deps.gateway.updatePriceTier(tier.id, { amount: price.unit_amount, active: price.active });
    return;
  }
  const plan = await deps.gateway.planByProviderProductId(price.product);
  if (plan === null) throw notSynchronized(`no plan has payment provider product ${price.product}`);
  await deps.gateway.createPriceTier({
    providerPriceId: price.id,
    planId: plan.id,
    amount: price.unit_amount,
    currency: price.currency,
    interval: price.recurring?.interval ?? null,
    active: price.active,
  });
}

/** The price as the provider has it now, applied; a price deleted meanwhile is deleted here too. */
async function applyCurrent(event: ValidEvent<PriceObject>, tier: PriceTier | null, deps: PaymentActionDeps): Promise<void> {
  const current = await deps.paymentProvider.retrievePrice(event.object.id);
  if (current === null) {
    if (tier !== null) await deps.gateway.deletePriceTier(tier.id);
    await recordDeleted(deps, priceKey(event.object.id), null, event.created);
    return;
  }
  await applyPrice(current, tier, deps);
  await recordApplied(deps, priceKey(event.object.id), event.created);
}

/**
 * price.created and price.updated: applied when the event is newer than what was applied (see
 * orderOf); a stale event, or one about a deleted price or a price of a deleted product, is
 * answered `stale` and changes nothing.
 */
const upsertPrice: PaymentEventAction<PriceObject> = (event, deps) =>
  withObjectVersion(deps, priceKey(event.object.id), async (version): Promise<ActionResult> => {
    const product = await deps.dedup.readVersion(productKey(event.object.product));
    const order = product?.deleted === true ? 'stale' : orderOf(version, event.created);
    if (order === 'stale') return 'stale';
    const tier = await deps.gateway.priceTierByProviderPriceId(event.object.id);
    if (order === 'newer' || (order === 'unknown' && tier === null)) {
      await applyPrice(event.object, tier, deps);
      await recordApplied(deps, priceKey(event.object.id), event.created);
    } else {
      await applyCurrent(event, tier, deps);
    }
    return 'processed';
  });

export const priceCreated = upsertPrice;
export const priceUpdated = upsertPrice;

/** price.deleted: delete the tier (already gone is fine) and leave a tombstone. */
export const priceDeleted: PaymentEventAction<DeletedObject> = (event, deps) =>
  withObjectVersion(deps, priceKey(event.object.id), async (version): Promise<ActionResult> => {
    const tier = await deps.gateway.priceTierByProviderPriceId(event.object.id);
    if (tier !== null) await deps.gateway.deletePriceTier(tier.id);
    await recordDeleted(deps, priceKey(event.object.id), version, event.created);
    return 'processed';
  });
