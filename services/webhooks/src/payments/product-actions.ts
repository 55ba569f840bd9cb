import { providerProductCreatedEvent } from '@sp/messaging';
import { notSynchronized } from '../errors.js';
import type { ProductObject } from './event-schemas.js';
import type { Plan, UpdatePlanInput } from '../gateway/gateway-port.js';
import type { PaymentActionDeps } from './payment-action.js';
import { versionedDelete, versionedUpsert, type VersionedObject, type VersionedWrite } from './versioned-object-actions.js';

export const productKey = (productId: string): string => `product:${productId}`;

function planFields(product: ProductObject, providerVersion: number): UpdatePlanInput {
  return { name: product.name, description: product.description ?? null, icon: product.images?.[0] ?? null, active: product.active, providerVersion };
}

/**
 * Makes the gateway's plan what `product` says. The plan exists: update it. It does not: a product
 * made by the platform for a plan (PlanCreatedEvent → consumer → provider) names the plan in
 * `metadata.planId`; on its creation ProviderProductCreatedEvent tells the plan its product id,
 * later changes wait (409) until the plan knows it. Any other product was made at the provider:
 * create its plan (also from an update that overtook the creation). False when the gateway holds
 * a newer version of the plan (the write was refused).
 */
async function applyProduct(product: ProductObject, plan: Plan | null, { event, version }: VersionedWrite, deps: PaymentActionDeps): Promise<boolean> {
  if (plan !== null) return (await deps.gateway.updatePlan(plan.id, planFields(product, version))).applied;
  const planId = product.metadata?.planId;
  if (planId === undefined || planId === '') return (await deps.gateway.createPlan({ providerProductId: product.id, ...planFields(product, version) })).applied;
  if (event.type !== 'product.created') throw notSynchronized(`no plan has payment provider product ${product.id}`);
  const data = { planId, providerProductId: product.id, name: product.name, active: product.active };
  await deps.publisher.publish(deps.topics.foreignProducts, providerProductCreatedEvent(data, event.id));
  return true;
}

/** Products as plans; the provider's current product stands for its own `updated` time when later. */
const products: VersionedObject<ProductObject, Plan> = {
  key: productKey,
  record: (id, deps) => deps.gateway.planByProviderProductId(id),
  current: (id, deps) => deps.paymentProvider.retrieveProduct(id),
  apply: applyProduct,
  remove: (plan, deps) => deps.gateway.deletePlan(plan.id),
  currentVersion: (event, current) => Math.max(event.created, current.updated ?? 0),
};

/**
 * product.created and product.updated: the plan takes the product's name, description, icon and
 * active status (see versionedUpsert for the order of events).
 */
export const productCreated = versionedUpsert(products);
export const productUpdated = productCreated;
export const productDeleted = versionedDelete(products);
