import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { startFederatedGateway, type FederatedGateway } from '../../../test/support/federated-gateway.js';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { checkoutSessionObject, productObject, stripeEvent, stripeMockFixtures } from './support/stripe-events.js';
import { postStripeEvent, startDependencies, startWebhooks, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';

/**
 * The webhooks journey through a gateway nobody here wrote: a signed Stripe event → the webhooks
 * service → Hive Gateway 2.15.1 (the supergraph the graph registry composed, read from its CDN
 * paths) → the user, product and payment subgraph fixtures, each checking the Keycloak token the
 * gateway passes on. The other dependencies are the suite's usual ones (its gateway fixture is not
 * used: GRAPHQL_API_URL names Hive Gateway).
 */

let deps: Dependencies;
let federated: FederatedGateway;
let service: WebhooksInstance;
let mock: Awaited<ReturnType<typeof stripeMockFixtures>>;

beforeAll(async () => {
  deps = await startDependencies();
  federated = await startFederatedGateway();
  service = await startWebhooks(deps, { env: { GRAPHQL_API_URL: federated.url } });
  mock = await stripeMockFixtures();
}, 120_000);

afterAll(async () => {
  await service?.close();
  await federated?.close();
  await deps?.close();
});

const subgraphs = () => federated.fixtures;
const onPayments = (key: string) => (event: ConsumedEvent) => event.topic === deps.topics.payments && event.key === key;

beforeEach(() => {
  const { data, received } = subgraphs();
  for (const list of Object.values(data)) (list as unknown[]).length = 0;
  received.length = 0;
});

describe('Stripe events through Hive Gateway to the subgraphs', () => {
  it('should create one PaymentConfirmation and one PlanSubscription in the payment subgraph and publish PaymentConfirmedEvent on checkout.session.completed', async () => {
    const client = subgraphs().addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
    const plan = subgraphs().addPlan({ name: 'Gold', providerProductId: mock.productId });
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);

    const answer = await postStripeEvent(service.baseUrl, event);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({ received: true, result: 'processed' });

    // The lookups reached the user and product subgraphs, the writes the payment subgraph, each once.
    expect(subgraphs().received.map((op) => op.fields[0])).toEqual(['clientByProviderCustomerId', 'planByProviderProductId', 'createPaymentConfirmation', 'createPlanSubscription']);
    const paidAt = new Date((event.created as number) * 1000).toISOString();
    const [confirmation] = subgraphs().data.paymentConfirmations;
    expect(subgraphs().data.paymentConfirmations).toEqual([
      { id: expect.any(String), checkoutSessionId: session.id, clientId: client.id, planId: plan.id, invoiceId: session.invoice, amount: mock.invoiceTotal, currency: mock.invoiceCurrency, paidAt },
    ]);
    expect(subgraphs().data.planSubscriptions).toEqual([{ id: expect.any(String), checkoutSessionId: session.id, clientId: client.id, planId: plan.id, providerSubscriptionId: session.subscription }]);
    const published = await deps.events.waitFor(onPayments(session.id as string));
    expect(published.value).toMatchObject({
      checkoutSessionId: session.id,
      clientId: client.id,
      planId: plan.id,
      paymentConfirmationId: confirmation!.id,
      planSubscriptionId: subgraphs().data.planSubscriptions[0]!.id,
      providerCustomerId: mock.customerId,
    });
    // The gateway passed the service's Keycloak token on; no subgraph refused a call.
    expect(subgraphs().tokens.accepted).toBeGreaterThan(0);
    expect(subgraphs().tokens.refused).toBe(0);
  });

  it('should answer a redelivery with 200 duplicate and write nothing again', async () => {
    subgraphs().addClient({ number: 8, name: 'Bakery', phoneNumber: '+15550002222', providerCustomerId: mock.customerId });
    subgraphs().addPlan({ name: 'Gold', providerProductId: mock.productId });
    const event = stripeEvent('checkout.session.completed', checkoutSessionObject());
    expect((await postStripeEvent(service.baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    const again = await postStripeEvent(service.baseUrl, event, { timestamp: Math.floor(Date.now() / 1000) + 1 });
    expect(again.json).toEqual({ received: true, result: 'duplicate' });
    expect(subgraphs().mutations().map((op) => op.fields[0])).toEqual(['createPaymentConfirmation', 'createPlanSubscription']);
  });

  it('should answer 5xx while the payment subgraph is down, creating nothing, and process the provider retry once it is back', async () => {
    subgraphs().addClient({ number: 9, name: 'Florist', phoneNumber: '+15550003333', providerCustomerId: mock.customerId });
    subgraphs().addPlan({ name: 'Gold', providerProductId: mock.productId });
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);
    await subgraphs().servers.payment.stop();
    try {
      const failed = await postStripeEvent(service.baseUrl, event);
      // The gateway answers the unreachable subgraph with a GraphQL error: the provider must retry.
      expect(failed.status).toBeGreaterThanOrEqual(500);
      expect(subgraphs().data.paymentConfirmations).toEqual([]);
    } finally {
      await subgraphs().servers.payment.start();
    }
    const retry = await postStripeEvent(service.baseUrl, event);
    expect(retry.json).toEqual({ received: true, result: 'processed' });
    expect(subgraphs().data.paymentConfirmations).toHaveLength(1);
    expect(subgraphs().data.planSubscriptions).toHaveLength(1);
    await deps.events.waitFor(onPayments(session.id as string));
    expect(deps.events.events.filter(onPayments(session.id as string))).toHaveLength(1);
  });

  it('should create a plan in the product subgraph from product.created', async () => {
    const product = productObject();
    const answer = await postStripeEvent(service.baseUrl, stripeEvent('product.created', product));
    expect(answer.json).toEqual({ received: true, result: 'processed' });
    expect(subgraphs().mutations().map((op) => op.fields)).toEqual([['createPlan']]);
    expect(subgraphs().data.plans).toEqual([expect.objectContaining({ providerProductId: product.id, name: 'Weekly deals', active: true })]);
  });

  it("should let the subgraphs' schema be read without a token (the controller's `_service` read), and nothing else, not even beside it", async () => {
    const post = (query: string) =>
      fetch(subgraphs().servers.user.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> }));
    const schemaRead = await post('{ _service { sdl } }');
    expect(schemaRead.status).toBe(200);
    expect(JSON.stringify(schemaRead.body)).toContain('clientByProviderCustomerId');
    expect((await post('{ _service { sdl } clientByNumber(number: 1) { name } }')).status).toBe(401);
    expect((await post('{ clientByNumber(number: 1) { name } }')).status).toBe(401);
    expect((await post('mutation { _service { sdl } }')).status).toBe(401);
  });
});
