import { beforeEach, describe, expect, it } from '@jest/globals';
import { checkoutSessionObject, priceObject, productObject, stripeEvent } from './support/stripe-events.js';
import { counterValue, postStripeEvent, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { useStripeWebhooksSuite, type StripeMockFixtures } from './support/stripe-webhooks-suite.js';

let deps: Dependencies;
let service: WebhooksInstance;
let mock: StripeMockFixtures;
useStripeWebhooksSuite((suite) => ({ deps, service, mock } = suite));

beforeEach(() => {
  deps.gateway.reset();
  // Everything a well-formed event of each type would need exists: only the event's shape can fail it.
  deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
  const plan = deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
  deps.gateway.addPlan({ name: 'Silver', providerProductId: 'prod_malformed' });
  deps.gateway.addPriceTier({ planId: plan.id, providerPriceId: 'price_malformed' });
});

type Json = Record<string, unknown>;
const without = (object: Json, field: string): Json => Object.fromEntries(Object.entries(object).filter(([key]) => key !== field));
const checkout = (object: Json): Json => stripeEvent('checkout.session.completed', object);

/** Signed bodies, each wrong in one way, and the field the answer must name. */
const MALFORMED: [string, () => unknown, string][] = [
  ['null', () => null, 'expected object'],
  ['an array', () => [stripeEvent('product.created', productObject())], 'expected object'],
  ['a string', () => 'product.created', 'expected object'],
  ['no data', () => without(stripeEvent('product.created', productObject()), 'data'), 'data:'],
  ['data without object', () => ({ ...stripeEvent('product.created', productObject()), data: {} }), 'data.object:'],
  ['data.object null', () => ({ ...stripeEvent('product.created', productObject()), data: { object: null } }), 'data.object:'],
  ['no id', () => without(stripeEvent('product.created', productObject()), 'id'), 'id:'],
  ['an empty id', () => stripeEvent('product.created', productObject(), ''), 'id:'],
  ['a numeric id', () => ({ ...stripeEvent('product.created', productObject()), id: 42 }), 'id:'],
  ['no created', () => without(stripeEvent('product.created', productObject()), 'created'), 'created:'],
  ['created as a string', () => ({ ...stripeEvent('product.created', productObject()), created: '1700000000' }), 'created:'],
  ['no livemode', () => without(stripeEvent('product.created', productObject()), 'livemode'), 'livemode:'],
  ['livemode as a string', () => ({ ...stripeEvent('product.created', productObject()), livemode: 'false' }), 'livemode:'],
  ['no type', () => without(stripeEvent('product.created', productObject()), 'type'), 'type:'],
  ['a checkout without session id', () => checkout(without(checkoutSessionObject(), 'id')), 'data.object.id:'],
  ['a checkout without customer', () => checkout(without(checkoutSessionObject(), 'customer')), 'data.object.customer:'],
  ['a checkout with an unknown payment status', () => checkout(checkoutSessionObject({ payment_status: 'maybe' })), 'data.object.payment_status:'],
  ['a checkout with a numeric amount_total as text', () => checkout(checkoutSessionObject({ amount_total: '1000' })), 'data.object.amount_total:'],
  ['a product without name', () => stripeEvent('product.updated', without(productObject({ id: 'prod_malformed' }), 'name')), 'data.object.name:'],
  ['a product with active as a string', () => stripeEvent('product.created', productObject({ active: 'yes' })), 'data.object.active:'],
  ['a product with more metadata than Stripe allows (50 keys)', () => stripeEvent('product.created', productObject({ metadata: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`k${i}`, 'v'])) })), 'data.object.metadata:'],
  ['a product with a number in its metadata', () => stripeEvent('product.created', productObject({ metadata: { planId: 42 } })), 'data.object.metadata:'],
  ['a product with images as a string', () => stripeEvent('product.created', productObject({ images: 'https://x.example.com/a.png' })), 'data.object.images:'],
  ['a deleted product without id', () => stripeEvent('product.deleted', without(productObject({ id: 'prod_malformed' }), 'id')), 'data.object.id:'],
  ['a price without product', () => stripeEvent('price.created', without(priceObject(mock.productId), 'product')), 'data.object.product:'],
  ['a price with a negative amount', () => stripeEvent('price.updated', priceObject(mock.productId, { id: 'price_malformed', unit_amount: -5 })), 'data.object.unit_amount:'],
  ['a price with a fractional amount', () => stripeEvent('price.updated', priceObject(mock.productId, { id: 'price_malformed', unit_amount: 9.5 })), 'data.object.unit_amount:'],
  ['a price without active', () => stripeEvent('price.updated', without(priceObject(mock.productId, { id: 'price_malformed' }), 'active')), 'data.object.active:'],
  ['a price in an upper-case currency', () => stripeEvent('price.created', priceObject(mock.productId, { currency: 'USD' })), 'data.object.currency:'],
];

describe('malformed signed events', () => {
  it.each(MALFORMED)('should answer 400 naming the field for %s, with no gateway call and no event', async (_case, body, field) => {
    const before = deps.events.events.length;
    const refused = await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', result: 'refused' });
    const answer = await postStripeEvent(service.baseUrl, JSON.stringify(body()));
    expect(answer.status).toBe(400);
    expect(await counterValue(service.registry, 'webhook_events_total', { provider: 'stripe', result: 'refused' })).toBe(refused + 1);
    expect(answer.json!.error).toMatch(/^malformed event: /);
    expect(answer.json!.error).toContain(field);
    expect(deps.gateway.received).toEqual([]);
    expect(deps.events.events.length).toBe(before);
  });

  it('should answer 400 malformed, not "invalid signature", for a signed body that is not JSON', async () => {
    const signatureFailures = await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' });
    const answer = await postStripeEvent(service.baseUrl, '{"id": "evt_1", "type": "product.created",');
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'malformed event: body is not a JSON event' });
    expect(await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' })).toBe(signatureFailures);
    expect(deps.gateway.received).toEqual([]);
  });

  it('should not let a malformed event take the de-duplication slot of its id: the well-formed delivery is processed', async () => {
    const product = productObject();
    const event = stripeEvent('product.created', product);
    expect((await postStripeEvent(service.baseUrl, { ...event, data: { object: without(product, 'name') } })).status).toBe(400);
    expect((await postStripeEvent(service.baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.plans.filter((p) => p.providerProductId === product.id)).toHaveLength(1);
  });

  it('should still acknowledge an unlisted event type whose object it does not read, as long as the envelope is whole', async () => {
    const answer = await postStripeEvent(service.baseUrl, stripeEvent('invoice.paid', { object: 'invoice' }));
    expect(answer.json).toEqual({ received: true, result: 'ignored' });
  });
});
