import { notSynchronized } from './errors.js';
import type { DeletedObject, ProductObject, ValidEvent } from './event-schemas.js';
import { providerProductCreatedEvent } from './events.js';
import type { Plan, UpdatePlanInput } from './gateway.js';
import { orderOf, recordApplied, recordDeleted, withObjectVersion } from './object-order.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-event-action.js';

export const productKey = (productId: string): string => `product:${productId}`;

function planFields(product: ProductObject): UpdatePlanInput {
  return { name: product.name, description: product.description ?? null, icon: product.images?.[0] ?? null, active: product.active };
}

/**
 * Makes the gateway's plan what `product` says. The plan exists: update it. It does not: a product
 * made by the platform for a plan (PlanCreatedEvent → consumer → provider) names the plan in
 * `metadata.planId`; on its creation ProviderProductCreatedEvent tells the plan its product id,
 * later changes wait (409) until the plan knows it. Any other product was made at the provider:
 * create its plan (also from an update that overtook the creation).
 */
async function applyProduct(product: ProductObject, plan: Plan | null, event: ValidEvent<unknown>, deps: PaymentActionDeps): Promise<void> {
  if (plan !== null) {
    await deps.gateway.updatePlan(plan.id, planFields(product));
    return;
  }
  const planId = product.metadata?.planId;
  if (planId === undefined || planId === '') {
    await deps.gateway.createPlan({ providerProductId: product.id, ...planFields(product) });
    return;
  }
  if (event.type !== 'product.created') throw notSynchronized(`no plan has payment provider product ${product.id}`);
  const data = { planId, providerProductId: product.id, name: product.name, active: product.active };
  await deps.publisher.publish(deps.topics.foreignProducts, providerProductCreatedEvent(data, event.id));
}

/** The product as the provider has it now, applied; a product deleted meanwhile is deleted here too. */
async function applyCurrent(event: ValidEvent<ProductObject>, plan: Plan | null, deps: PaymentActionDeps): Promise<void> {
  const key = productKey(event.object.id);
  const current = await deps.paymentProvider.retrieveProduct(event.object.id);
  if (current === null) {
    if (plan !== null) await deps.gateway.deletePlan(plan.id);
    await recordDeleted(deps, key, null, event.created);
    return;
  }
  await applyProduct(current, plan, event, deps);
  await recordApplied(deps, key, Math.max(event.created, current.updated ?? 0));
}

/**
 * product.created and product.updated: the plan takes the product's name, description, icon and
 * active status when the event is newer than what was applied (see orderOf); a stale event, or
 * one about a deleted product, is answered `stale` and changes nothing.
 */
const upsertProduct: PaymentEventAction<ProductObject> = (event, deps) =>
  withObjectVersion(deps, productKey(event.object.id), async (version): Promise<ActionResult> => {
    const order = orderOf(version, event.created);
    if (order === 'stale') return 'stale';
    const plan = await deps.gateway.planByProviderProductId(event.object.id);
    if (order === 'newer' || (order === 'unknown' && plan === null)) {
      await applyProduct(event.object, plan, event, deps);
      await recordApplied(deps, productKey(event.object.id), event.created);
    } else {
      await applyCurrent(event, plan, deps);
    }
    return 'processed';
  });

export const productCreated = upsertProduct;
export const productUpdated = upsertProduct;

/** product.deleted: delete its plan (already gone is fine) and leave a tombstone. */
export const productDeleted: PaymentEventAction<DeletedObject> = (event, deps) =>
  withObjectVersion(deps, productKey(event.object.id), async (version): Promise<ActionResult> => {
    const plan = await deps.gateway.planByProviderProductId(event.object.id);
    if (plan !== null) await deps.gateway.deletePlan(plan.id);
    await recordDeleted(deps, productKey(event.object.id), version, event.created);
    return 'processed';
  });
