import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { checkoutSessionObject, productObject, stripeEvent, stripeMockFixtures } from './support/stripe-events.js';
import { postStripeEvent, startDependencies, startWebhooks, type Answer, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';

let deps: Dependencies;
/** Two replicas sharing Redis (the same key prefix), the broker and the gateway. */
let replicas: [WebhooksInstance, WebhooksInstance];
let mock: Awaited<ReturnType<typeof stripeMockFixtures>>;

beforeAll(async () => {
  deps = await startDependencies();
  replicas = [await startWebhooks(deps), await startWebhooks(deps)];
  mock = await stripeMockFixtures();
});

afterAll(async () => {
  await Promise.all((replicas ?? []).map((replica) => replica?.close()));
  await deps?.close();
});

beforeEach(() => {
  deps.gateway.reset();
  deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
  deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
});

const paymentsFor = (sessionId: string): ConsumedEvent[] => deps.events.events.filter((e) => e.topic === deps.topics.payments && e.key === sessionId);

/** Once an event published later has arrived, every earlier one has (one partition, in order). */
async function settle(): Promise<void> {
  const marker = productObject({ metadata: { planId: `marker-${Date.now()}` } });
  await postStripeEvent(replicas[0].baseUrl, stripeEvent('product.created', marker));
  await deps.events.waitFor((e) => e.key === marker.id);
}

/** `count` deliveries of the same signed event at once, alternating between the replicas. */
function deliverConcurrently(event: Record<string, unknown>, count: number): Promise<Answer[]> {
  const payload = JSON.stringify(event);
  return Promise.all(Array.from({ length: count }, (_, i) => postStripeEvent(replicas[i % 2]!.baseUrl, payload)));
}

describe('fulfilment once per checkout session', () => {
  it('should record one payment for completed, then async_payment_succeeded (a new event id), then 10 concurrent duplicates of each over two replicas', async () => {
    const session = checkoutSessionObject();
    const completed = stripeEvent('checkout.session.completed', session);
    const succeeded = stripeEvent('checkout.session.async_payment_succeeded', session);

    expect((await postStripeEvent(replicas[0].baseUrl, completed)).json).toEqual({ received: true, result: 'processed' });
    expect((await postStripeEvent(replicas[1].baseUrl, succeeded)).json).toEqual({ received: true, result: 'duplicate' });
    const answers = [...(await deliverConcurrently(completed, 10)), ...(await deliverConcurrently(succeeded, 10))];
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(new Set(answers.map((a) => a.json!.result))).toEqual(new Set(['duplicate']));

    await deps.events.waitFor((e) => e.topic === deps.topics.payments && e.key === session.id);
    await settle();
    expect(deps.gateway.data.paymentConfirmations.filter((c) => c.checkoutSessionId === session.id)).toHaveLength(1);
    expect(deps.gateway.data.planSubscriptions.filter((s) => s.checkoutSessionId === session.id)).toHaveLength(1);
    expect(deps.gateway.mutations('createPaymentConfirmation')).toHaveLength(1);
    const published = paymentsFor(session.id as string);
    expect(published).toHaveLength(1);
    expect(published[0]!.headers.ce_id).toBe(`PaymentConfirmedEvent:${session.id as string}`);
  });

  it('should fulfil once when both event types of one session arrive at the same moment, 10 times each, on two replicas', async () => {
    const session = checkoutSessionObject();
    const completed = JSON.stringify(stripeEvent('checkout.session.completed', session));
    const succeeded = JSON.stringify(stripeEvent('checkout.session.async_payment_succeeded', session));
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => postStripeEvent(replicas[i % 2]!.baseUrl, i % 4 < 2 ? completed : succeeded)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.filter((a) => a.json!.result === 'processed')).toHaveLength(1);

    await deps.events.waitFor((e) => e.topic === deps.topics.payments && e.key === session.id);
    await settle();
    expect(deps.gateway.mutations('createPaymentConfirmation')).toHaveLength(1);
    expect(deps.gateway.mutations('createPlanSubscription')).toHaveLength(1);
    expect(paymentsFor(session.id as string)).toHaveLength(1);
  });

  it('should let async_payment_succeeded fulfil a session whose completed event was deferred, and then answer the completed redelivery duplicate', async () => {
    const session = checkoutSessionObject({ payment_status: 'unpaid' });
    const completed = stripeEvent('checkout.session.completed', session);
    expect((await postStripeEvent(replicas[0].baseUrl, completed)).json).toEqual({ received: true, result: 'deferred' });
    expect((await postStripeEvent(replicas[1].baseUrl, stripeEvent('checkout.session.async_payment_succeeded', { ...session, payment_status: 'paid' }))).json).toEqual({
      received: true,
      result: 'processed',
    });
    // A fresh delivery of the same session's completion (another event id) finds the session fulfilled.
    expect((await postStripeEvent(replicas[0].baseUrl, stripeEvent('checkout.session.completed', { ...session, payment_status: 'paid' }))).json).toEqual({
      received: true,
      result: 'duplicate',
    });
    await deps.events.waitFor((e) => e.topic === deps.topics.payments && e.key === session.id);
    await settle();
    expect(paymentsFor(session.id as string)).toHaveLength(1);
  });
});
