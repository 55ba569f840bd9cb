import type Stripe from 'stripe';
import { notSynchronized } from './errors.js';
import { providerProductCreatedEvent } from './events.js';
import type { UpdatePlanInput } from './gateway.js';
import type { PaymentEventAction } from './payment-event-action.js';

function planFields(product: Stripe.Product): UpdatePlanInput {
  return { name: product.name, description: product.description ?? null, icon: product.images?.[0] ?? null, active: product.active };
}

/**
 * product.created. A product made by the platform for a plan (PlanCreatedEvent → consumer →
 * provider) names the plan in `metadata.planId`: publish ProviderProductCreatedEvent so the plan
 * learns its product id. Any other product was made at the provider: create its plan.
 */
export const productCreated: PaymentEventAction = async (event, deps) => {
  const product = event.data.object as Stripe.Product;
  const planId = product.metadata?.planId;
  if (planId !== undefined && planId !== '') {
    const data = { planId, providerProductId: product.id, name: product.name, active: product.active };
    await deps.publisher.publish(deps.topics.foreignProducts, providerProductCreatedEvent(data, event.id));
    return 'processed';
  }
  await deps.gateway.createPlan({ providerProductId: product.id, ...planFields(product) });
  return 'processed';
};

/** product.updated: name, description, icon and active status of its plan (409 while the plan is unknown). */
export const productUpdated: PaymentEventAction = async (event, deps) => {
  const product = event.data.object as Stripe.Product;
  const plan = await deps.gateway.planByProviderProductId(product.id);
  if (plan === null) throw notSynchronized(`no plan has payment provider product ${product.id}`);
  await deps.gateway.updatePlan(plan.id, planFields(product));
  return 'processed';
};

/** product.deleted: delete its plan; already gone is fine. */
export const productDeleted: PaymentEventAction = async (event, deps) => {
  const product = event.data.object as Stripe.Product;
  const plan = await deps.gateway.planByProviderProductId(product.id);
  if (plan !== null) await deps.gateway.deletePlan(plan.id);
  return 'processed';
};
