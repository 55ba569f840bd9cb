import { beforeEach, describe, expect, it } from '@jest/globals';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { checkoutSessionObject, priceObject, productObject, stripeEvent } from './support/stripe-events.js';
import { counterValue, postStripeEvent, ROTATED_API_KEY, STRIPE_SECRETS, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { useStripeWebhooksSuite, type StripeMockFixtures } from './support/stripe-webhooks-suite.js';

let deps: Dependencies;
let service: WebhooksInstance;
let mock: StripeMockFixtures;
useStripeWebhooksSuite((suite) => ({ deps, service, mock } = suite));

beforeEach(() => {
  deps.gateway.reset();
  deps.localization.reset();
});

const now = (): number => Math.floor(Date.now() / 1000);
const onTopic = (topic: string, key: string) => (event: ConsumedEvent) => event.topic === topic && event.key === key;
const eventsWithKey = (key: string): ConsumedEvent[] => deps.events.events.filter((event) => event.key === key);

describe('product events', () => {
  it('should create a plan from product.created when the product names no plan', async () => {
    const product = productObject();
    const event = stripeEvent('product.created', product);
    const answer = await postStripeEvent(service.baseUrl, event);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.mutations().map((op) => op.fields)).toEqual([['createPlan']]);
    expect(deps.gateway.mutations('createPlan')[0]!.variables).toEqual({
      input: {
        providerProductId: product.id,
        name: 'Weekly deals',
        description: 'Weekly deals by SMS',
        icon: 'https://files.example.com/plans/weekly-deals.png',
        active: true,
        providerVersion: event.created,
      },
    });
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: product.id, name: 'Weekly deals' })]);
  });

  it('should publish ProviderProductCreatedEvent on ForeignProducts when the product was made for a platform plan', async () => {
    const product = productObject({ name: 'Gold', metadata: { planId: 'plan-42' } });
    const event = stripeEvent('product.created', product);
    const answer = await postStripeEvent(service.baseUrl, event);
    expect(answer.status).toBe(200);
    const published = await deps.events.waitFor(onTopic(deps.topics.foreignProducts, product.id as string));
    expect(published.value).toEqual({ planId: 'plan-42', providerProductId: product.id, name: 'Gold', active: true });
    expectEventPayload('ProviderProductCreatedEvent', published.value);
    expect(published.headers).toMatchObject({
      ce_specversion: '1.0',
      ce_type: 'ProviderProductCreatedEvent',
      ce_id: event.id,
      ce_source: '/subscription-platform/webhooks',
      'content-type': 'application/json',
    });
    expect(deps.gateway.mutations()).toEqual([]);
  });

  it('should update name, description, icon and active status of the plan on product.updated', async () => {
    const created = productObject({ id: 'prod_update_1', name: 'Old name', description: 'old', images: [] });
    expect((await postStripeEvent(service.baseUrl, { ...stripeEvent('product.created', created), created: now() - 60 })).json).toEqual({ received: true, result: 'processed' });
    const plan = deps.gateway.data.plans[0]!;
    const product = productObject({ id: 'prod_update_1', name: 'New name', description: 'new', images: ['https://files.example.com/new.png'], active: false });
    const updated = stripeEvent('product.updated', product);
    const answer = await postStripeEvent(service.baseUrl, updated);
    expect(answer.status).toBe(200);
    expect(deps.gateway.mutations('updatePlan').map((op) => op.variables)).toEqual([
      { id: plan.id, input: { name: 'New name', description: 'new', icon: 'https://files.example.com/new.png', active: false, providerVersion: updated.created } },
    ]);
    expect(deps.gateway.data.plans[0]).toMatchObject({ id: plan.id, name: 'New name', description: 'new', icon: 'https://files.example.com/new.png', active: false });
  });

  it('should delete the plan on product.deleted, and accept a product whose plan is gone already', async () => {
    const plan = deps.gateway.addPlan({ name: 'Doomed', providerProductId: 'prod_delete_1' });
    const product = productObject({ id: 'prod_delete_1', active: false });
    expect((await postStripeEvent(service.baseUrl, stripeEvent('product.deleted', product))).status).toBe(200);
    expect(deps.gateway.mutations('deletePlan').map((op) => op.variables)).toEqual([{ id: plan.id }]);
    expect(deps.gateway.data.plans).toEqual([]);

    const again = await postStripeEvent(service.baseUrl, stripeEvent('product.deleted', product));
    expect(again.json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.mutations('deletePlan')).toHaveLength(1);
  });
});

describe('price events', () => {
  it('should create a price tier of the product plan on price.created', async () => {
    const plan = deps.gateway.addPlan({ name: 'Gold', providerProductId: 'prod_prices_1' });
    const price = priceObject('prod_prices_1', { unit_amount: 2500, currency: 'eur', recurring: { interval: 'year', interval_count: 1, usage_type: 'licensed' } });
    const event = stripeEvent('price.created', price);
    expect((await postStripeEvent(service.baseUrl, event)).status).toBe(200);
    expect(deps.gateway.mutations('createPriceTier').map((op) => op.variables)).toEqual([
      { input: { providerPriceId: price.id, planId: plan.id, amount: 2500, currency: 'eur', interval: 'year', active: true, providerVersion: event.created } },
    ]);
    expect(deps.gateway.data.priceTiers).toEqual([expect.objectContaining({ providerPriceId: price.id, planId: plan.id, amount: 2500 })]);
  });

  it('should update the amount and the active state of the price tier on price.updated: archived, then offered again', async () => {
    deps.gateway.addPlan({ name: 'Gold', providerProductId: 'prod_prices_2' });
    const created = priceObject('prod_prices_2', { id: 'price_update_1', unit_amount: 1000 });
    expect((await postStripeEvent(service.baseUrl, { ...stripeEvent('price.created', created), created: now() - 60 })).json).toEqual({ received: true, result: 'processed' });
    const tier = deps.gateway.data.priceTiers[0]!;
    const archived = priceObject('prod_prices_2', { id: 'price_update_1', unit_amount: 1200, active: false });
    const archivedAt = now() - 30;
    expect((await postStripeEvent(service.baseUrl, { ...stripeEvent('price.updated', archived), created: archivedAt })).status).toBe(200);
    expect(deps.gateway.data.priceTiers[0]).toMatchObject({ amount: 1200, active: false });
    const unarchived = priceObject('prod_prices_2', { id: 'price_update_1', unit_amount: 1200, active: true });
    const offeredAgain = stripeEvent('price.updated', unarchived);
    expect((await postStripeEvent(service.baseUrl, offeredAgain)).status).toBe(200);
    expect(deps.gateway.mutations('updatePriceTier').map((op) => op.variables)).toEqual([
      { id: tier.id, input: { amount: 1200, active: false, providerVersion: archivedAt } },
      { id: tier.id, input: { amount: 1200, active: true, providerVersion: offeredAgain.created } },
    ]);
    expect(deps.gateway.data.priceTiers[0]).toMatchObject({ amount: 1200, active: true });
  });

  it('should read the price from the provider when a tier exists but no change of it was recorded', async () => {
    const plan = deps.gateway.addPlan({ name: 'Gold', providerProductId: 'prod_prices_4' });
    const tier = deps.gateway.addPriceTier({ planId: plan.id, providerPriceId: 'price_unknown_1', amount: 1 });
    const price = priceObject('prod_prices_4', { id: 'price_unknown_1', unit_amount: 1 });
    const event = stripeEvent('price.updated', price);
    expect((await postStripeEvent(service.baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    // stripe-mock answers its fixture price, whatever the id: its amount, not the event's.
    expect(deps.gateway.mutations('updatePriceTier').map((op) => op.variables)).toEqual([
      { id: tier.id, input: { amount: mock.priceAmount, active: mock.priceActive, providerVersion: event.created } },
    ]);
  });

  it('should delete the price tier on price.deleted', async () => {
    const plan = deps.gateway.addPlan({ name: 'Gold', providerProductId: 'prod_prices_3' });
    const tier = deps.gateway.addPriceTier({ planId: plan.id, providerPriceId: 'price_delete_1' });
    expect((await postStripeEvent(service.baseUrl, stripeEvent('price.deleted', priceObject('prod_prices_3', { id: 'price_delete_1' })))).status).toBe(200);
    expect(deps.gateway.mutations('deletePriceTier').map((op) => op.variables)).toEqual([{ id: tier.id }]);
    expect(deps.gateway.data.priceTiers).toEqual([]);
  });

  it('should answer 409 for a price of a product without plan, and process the redelivery once the plan exists', async () => {
    const price = priceObject('prod_late_1');
    const event = stripeEvent('price.created', price);
    const early = await postStripeEvent(service.baseUrl, event);
    expect(early.status).toBe(409);
    expect(early.json).toEqual({ error: 'no plan has payment provider product prod_late_1' });
    expect(deps.gateway.mutations()).toEqual([]);

    deps.gateway.addPlan({ name: 'Late', providerProductId: 'prod_late_1' });
    const retry = await postStripeEvent(service.baseUrl, event);
    expect(retry.json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.priceTiers).toHaveLength(1);
  });
});

describe('checkout events', () => {
  const seedCustomer = () => ({
    client: deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId }),
    plan: deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId }),
  });

  it('should create one PaymentConfirmation and one PlanSubscription and publish PaymentConfirmedEvent on checkout.session.completed', async () => {
    const { client, plan } = seedCustomer();
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);
    const answer = await postStripeEvent(service.baseUrl, event);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ received: true, result: 'processed' });

    const paidAt = new Date((event.created as number) * 1000).toISOString();
    expect(deps.gateway.mutations().map((op) => op.fields[0])).toEqual(['createPaymentConfirmation', 'createPlanSubscription']);
    expect(deps.gateway.data.paymentConfirmations).toEqual([
      {
        id: expect.any(String),
        checkoutSessionId: session.id,
        clientId: client.id,
        planId: plan.id,
        invoiceId: session.invoice,
        amount: mock.invoiceTotal,
        currency: mock.invoiceCurrency,
        paidAt,
      },
    ]);
    expect(deps.gateway.data.planSubscriptions).toEqual([
      { id: expect.any(String), checkoutSessionId: session.id, clientId: client.id, planId: plan.id, providerSubscriptionId: session.subscription },
    ]);
    const published = await deps.events.waitFor(onTopic(deps.topics.payments, session.id as string));
    expect(published.value).toEqual({
      checkoutSessionId: session.id,
      clientId: client.id,
      planId: plan.id,
      paymentConfirmationId: deps.gateway.data.paymentConfirmations[0]!.id,
      planSubscriptionId: deps.gateway.data.planSubscriptions[0]!.id,
      invoiceId: session.invoice,
      providerCustomerId: mock.customerId,
      providerSubscriptionId: session.subscription,
      amount: mock.invoiceTotal,
      currency: mock.invoiceCurrency,
      paidAt,
    });
    expectEventPayload('PaymentConfirmedEvent', published.value);
    // One payment, one id: derived from the checkout session, not from the provider event.
    expect(published.headers).toMatchObject({ ce_type: 'PaymentConfirmedEvent', ce_id: `PaymentConfirmedEvent:${session.id as string}` });
  });

  it('should defer a completed checkout whose payment is pending, and confirm it on checkout.session.async_payment_succeeded', async () => {
    seedCustomer();
    const session = checkoutSessionObject({ payment_status: 'unpaid' });
    const completed = await postStripeEvent(service.baseUrl, stripeEvent('checkout.session.completed', session));
    expect(completed.json).toEqual({ received: true, result: 'deferred' });
    expect(deps.gateway.mutations()).toEqual([]);

    const succeeded = await postStripeEvent(service.baseUrl, stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' }));
    expect(succeeded.json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.paymentConfirmations).toHaveLength(1);
    expect(deps.gateway.data.planSubscriptions).toHaveLength(1);
    await deps.events.waitFor(onTopic(deps.topics.payments, session.id as string));
    expect(eventsWithKey(session.id as string)).toHaveLength(1);
  });

  it('should answer 409 for a checkout of a customer that no client has, creating nothing', async () => {
    deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
    const answer = await postStripeEvent(service.baseUrl, stripeEvent('checkout.session.completed', checkoutSessionObject()));
    expect(answer.status).toBe(409);
    expect(answer.json).toEqual({ error: `no client has payment provider customer ${mock.customerId}` });
    expect(deps.gateway.mutations()).toEqual([]);
  });
});

describe('the gateway fixture of make up', () => {
  it('should show the mutations a webhook made at GET /_operations, paged by `since`', async () => {
    const { last } = (await (await fetch(new URL('/_operations', deps.gateway.url))).json()) as { last: number };
    const product = productObject({ name: 'Shown' });
    await postStripeEvent(service.baseUrl, stripeEvent('product.created', product));
    const view = (await (await fetch(new URL(`/_operations?since=${last}&type=mutation`, deps.gateway.url))).json()) as { last: number; operations: Record<string, unknown>[] };
    expect(view.operations).toEqual([
      expect.objectContaining({ type: 'mutation', fields: ['createPlan'], failed: false, variables: { input: expect.objectContaining({ providerProductId: product.id, name: 'Shown' }) } }),
    ]);
    expect(view.last).toBeGreaterThan(last);
    expect(view.operations[0]!.receivedAt).toEqual(expect.stringMatching(/^\d{4}-\d{2}-\d{2}T/));
    // The queries it made first are there too, without the filter.
    const all = (await (await fetch(new URL(`/_operations?since=${last}`, deps.gateway.url))).json()) as { operations: { fields: string[] }[] };
    expect(all.operations.map((op) => op.fields[0])).toEqual(['planByProviderProductId', 'createPlan']);
  });
});

describe('other event types and key rotation', () => {
  it('should acknowledge an unlisted event type with 200 and touch nothing', async () => {
    const before = await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', result: 'ignored' });
    const event = stripeEvent('customer.subscription.updated', { id: 'sub_1', object: 'subscription', status: 'active' });
    const answer = await postStripeEvent(service.baseUrl, event);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ received: true, result: 'ignored' });
    expect(deps.gateway.received).toEqual([]);
    expect(await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', result: 'ignored' })).toBe(before + 1);
    // Not even remembered as processed: the store holds no record of it.
    const claim = await service.processing.claim(event.id as string, 1000);
    expect(claim.state).toBe('claimed');
  });

  it('should accept the second signing secret and the second API key (rotation)', async () => {
    const answer = await postStripeEvent(service.baseUrl, stripeEvent('product.created', productObject()), { secret: STRIPE_SECRETS[1], code: ROTATED_API_KEY });
    expect(answer.status).toBe(200);
    expect(deps.gateway.data.plans).toHaveLength(1);
  });

  it('should count processed events by type', async () => {
    const before = await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', type: 'product.created', result: 'processed' });
    await postStripeEvent(service.baseUrl, stripeEvent('product.created', productObject()));
    expect(await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', type: 'product.created', result: 'processed' })).toBe(before + 1);
  });
});
