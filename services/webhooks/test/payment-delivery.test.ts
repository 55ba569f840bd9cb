import { beforeEach, describe, expect, it } from '@jest/globals';
import { eventually } from '../../../test/support/eventually.js';
import { freePort } from '../../../test/support/redis-server.js';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { checkoutSessionObject, priceObject, productObject, signStripe, stripeEvent } from './support/stripe-events.js';
import {
  counterValue,
  postStripeEvent,
  startWebhooks,
  STRIPE_SECRETS,
  type Dependencies,
  type WebhooksInstance,
} from './support/webhooks-env.js';
import { useStripeWebhooksSuite, type StripeMockFixtures } from './support/stripe-webhooks-suite.js';

/** How long each readiness state is waited for, and one answer of /readyz (its checks time out at 2 s). */
const READYZ_WAIT_MS = 10_000;
const READYZ_ANSWER_MS = 5_000;

let deps: Dependencies;
let service: WebhooksInstance;
let mock: StripeMockFixtures;
useStripeWebhooksSuite((suite) => ({ deps, service, mock } = suite));

beforeEach(async () => {
  await deps.gateway.up();
  deps.gateway.reset();
});

const paymentsFor = (sessionId: string): ConsumedEvent[] => deps.events.events.filter((e) => e.topic === deps.topics.payments && e.key === sessionId);

function seedCustomer(): void {
  deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
  deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
}

/**
 * The published events are on one partition, in publishing order: once an event published after
 * `sessionId`'s has arrived, every event for `sessionId` that was ever going to arrive is there.
 */
async function settle(): Promise<void> {
  const marker = productObject({ metadata: { planId: `marker-${Date.now()}` } });
  await postStripeEvent(service.baseUrl, stripeEvent('product.created', marker));
  await deps.events.waitFor((e) => e.key === marker.id);
}

async function expectExactlyOnce(sessionId: string): Promise<void> {
  await deps.events.waitFor((e) => e.topic === deps.topics.payments && e.key === sessionId);
  await settle();
  expect(deps.gateway.data.paymentConfirmations.filter((c) => c.checkoutSessionId === sessionId)).toHaveLength(1);
  expect(deps.gateway.data.planSubscriptions.filter((s) => s.checkoutSessionId === sessionId)).toHaveLength(1);
  expect(paymentsFor(sessionId)).toHaveLength(1);
}

describe('at-least-once delivery', () => {
  it('should create exactly one PaymentConfirmation, one PlanSubscription and one Payments event when the same checkout.session.completed arrives 10 times at once', async () => {
    seedCustomer();
    const session = checkoutSessionObject();
    const payload = JSON.stringify(stripeEvent('checkout.session.completed', session));
    const answers = await Promise.all(Array.from({ length: 10 }, () => postStripeEvent(service.baseUrl, payload)));
    expect(answers.map((a) => a.status)).toEqual(Array(10).fill(200));
    const results = answers.map((a) => a.json!.result).sort();
    expect(results).toEqual(['duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'duplicate', 'processed']);
    await expectExactlyOnce(session.id as string);
    // Only one delivery did the work: one of each mutation reached the gateway.
    expect(deps.gateway.mutations('createPaymentConfirmation')).toHaveLength(1);
    expect(deps.gateway.mutations('createPlanSubscription')).toHaveLength(1);
  });

  it('should answer a redelivery of a processed event with 200 duplicate and do nothing again', async () => {
    const event = stripeEvent('product.created', productObject());
    expect((await postStripeEvent(service.baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    const again = await postStripeEvent(service.baseUrl, event, { timestamp: Math.floor(Date.now() / 1000) + 1 });
    expect(again.json).toEqual({ received: true, result: 'duplicate' });
    expect(deps.gateway.mutations('createPlan')).toHaveLength(1);
  });

  it('should answer 503 while the gateway is down, then process the provider retry with nothing missing or doubled', async () => {
    seedCustomer();
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);
    await deps.gateway.down();
    const failed = await postStripeEvent(service.baseUrl, event);
    expect(failed.status).toBe(503);
    expect(failed.json).toEqual({ error: 'GraphQL gateway is unavailable' });
    expect(deps.gateway.data.paymentConfirmations).toEqual([]);

    await deps.gateway.up();
    const retry = await postStripeEvent(service.baseUrl, event);
    expect(retry.status).toBe(200);
    expect(retry.json).toEqual({ received: true, result: 'processed' });
    await expectExactlyOnce(session.id as string);
  });

  it('should answer 5xx when the gateway fails part-way (after the PaymentConfirmation), and complete on retry without doubling it', async () => {
    seedCustomer();
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);
    deps.gateway.failNext({ mode: 'http-503', field: 'createPlanSubscription' });
    const failed = await postStripeEvent(service.baseUrl, event);
    expect(failed.status).toBe(503);
    expect(deps.gateway.data.paymentConfirmations).toHaveLength(1);
    expect(deps.gateway.data.planSubscriptions).toHaveLength(0);

    const retry = await postStripeEvent(service.baseUrl, event);
    expect(retry.json).toEqual({ received: true, result: 'processed' });
    await expectExactlyOnce(session.id as string);
  });

  it('should answer 502 for GraphQL errors and 503 for a dropped connection, each retried successfully', async () => {
    deps.gateway.addPlan({ name: 'Gold', providerProductId: 'prod_flaky' });
    const created = { ...stripeEvent('price.created', priceObject('prod_flaky', { id: 'price_flaky', unit_amount: 100 })), created: Math.floor(Date.now() / 1000) - 60 };
    expect((await postStripeEvent(service.baseUrl, created)).json).toEqual({ received: true, result: 'processed' });
    const event = stripeEvent('price.updated', priceObject('prod_flaky', { id: 'price_flaky', unit_amount: 300 }));
    deps.gateway.failNext({ mode: 'graphql-error', field: 'updatePriceTier' });
    expect((await postStripeEvent(service.baseUrl, event)).status).toBe(502);
    // Twice: a connection dropped on a reused keep-alive socket is retried once by the client.
    deps.gateway.failNext({ mode: 'disconnect', count: 2 });
    expect((await postStripeEvent(service.baseUrl, event)).status).toBe(503);
    deps.gateway.clearFailures();
    expect(deps.gateway.data.priceTiers[0]!.amount).toBe(100);

    expect((await postStripeEvent(service.baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.priceTiers[0]!.amount).toBe(300);
    expect(await counterValue(service.registry, 'webhook_events_total', { type: 'price.updated', result: 'failed' })).toBeGreaterThanOrEqual(2);
  });

  it('should answer 503 when the broker cannot be reached, and process the retry (on another replica) exactly once', async () => {
    seedCustomer();
    const brokerless = await startWebhooks(deps, { brokers: [`127.0.0.1:${await freePort()}`], publishTimeoutMs: 1500 });
    try {
      const session = checkoutSessionObject();
      const event = stripeEvent('checkout.session.completed', session);
      const failed = await postStripeEvent(brokerless.baseUrl, event);
      expect(failed.status).toBe(503);
      expect(failed.json).toEqual({ error: 'message broker is unavailable' });
      // The gateway records were made before the publish failed: the retry must not double them.
      expect(deps.gateway.data.paymentConfirmations).toHaveLength(1);

      const retry = await postStripeEvent(service.baseUrl, event);
      expect(retry.json).toEqual({ received: true, result: 'processed' });
      await expectExactlyOnce(session.id as string);
    } finally {
      await brokerless.close();
    }
  });
});

describe('rejected deliveries', () => {
  /** A rejected delivery leaves no trace: no gateway call, no event, and the event is still processable. */
  async function expectNoSideEffects(event: Record<string, unknown>): Promise<void> {
    expect(deps.gateway.received).toEqual([]);
    const accepted = await postStripeEvent(service.baseUrl, event);
    expect(accepted.json).toEqual({ received: true, result: 'processed' });
  }

  it('should reject a signature made with an unknown secret with 400 and no side effects', async () => {
    const event = stripeEvent('product.created', productObject());
    const before = await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' });
    const answer = await postStripeEvent(service.baseUrl, event, { secret: 'whsec_attacker_0000000000000000' });
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: 'invalid signature' });
    expect(await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' })).toBe(before + 1);
    await expectNoSideEffects(event);
  });

  it('should reject a signature older than 300 seconds with 400 and no side effects', async () => {
    const event = stripeEvent('product.created', productObject());
    const answer = await postStripeEvent(service.baseUrl, event, { timestamp: Math.floor(Date.now() / 1000) - 301 });
    expect(answer.status).toBe(400);
    await expectNoSideEffects(event);
  });

  it('should reject a body changed after signing, and a missing signature, with 400', async () => {
    const event = stripeEvent('product.created', productObject());
    const payload = JSON.stringify(event);
    const tampered = payload.replace('Weekly deals', 'Free for all');
    expect((await postStripeEvent(service.baseUrl, tampered, { signature: signStripe(payload, STRIPE_SECRETS[0]) })).status).toBe(400);
    expect((await postStripeEvent(service.baseUrl, event, { signature: null })).status).toBe(400);
    await expectNoSideEffects(event);
  });

  it('should reject a wrong or missing code with 401 before reading the body, with no side effects', async () => {
    const event = stripeEvent('product.created', productObject());
    const signatureFailures = await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' });
    const wrong = await postStripeEvent(service.baseUrl, event, { code: 'not-the-key' });
    expect(wrong.status).toBe(401);
    expect(wrong.json).toEqual({ error: 'unauthorized' });
    expect((await postStripeEvent(service.baseUrl, event, { code: null })).status).toBe(401);
    expect((await postStripeEvent(service.baseUrl, event, { code: 'not-the-key', signature: 'garbage' })).status).toBe(401);
    // The signature was never looked at.
    expect(await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'stripe' })).toBe(signatureFailures);
    await expectNoSideEffects(event);
  });

  it('should answer 415 for another media type, 413 for a body over 256 KiB and 405 for another method', async () => {
    const event = stripeEvent('product.created', productObject());
    expect((await postStripeEvent(service.baseUrl, event, { contentType: 'text/plain' })).status).toBe(415);
    // The media type is checked before the size: 2 MiB of text is 415, not 413.
    const bigText = await postStripeEvent(service.baseUrl, JSON.stringify(stripeEvent('product.created', productObject({ description: 'x'.repeat(2 * 1024 * 1024) }))), { contentType: 'text/plain' });
    expect(bigText.status).toBe(415);
    expect(bigText.json).toEqual({ error: 'content type must be one of: application/json' });
    const huge = stripeEvent('product.created', productObject({ description: 'x'.repeat(300 * 1024) }));
    expect((await postStripeEvent(service.baseUrl, huge)).status).toBe(413);
    const get = await fetch(`${service.baseUrl}/api/PaymentProviderWebhookHandler?code=${encodeURIComponent('test-webhooks-code-0123456789abcdef')}`);
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await fetch(`${service.baseUrl}/api/Other`)).status).toBe(404);
    await expectNoSideEffects(event);
  });
});

describe('operations', () => {
  it('should report every dependency ready, and name the gateway when it is down', async () => {
    // Each state is waited for, as a kubelet probes again before acting: a check whose dependency
    // answers past its 2 s timeout on a busy machine fails one probe (the pair saw a 503 here). The
    // waits end well inside the test's timeout, so a state that never comes is named with the last
    // answer instead of ending in jest's timeout.
    const answered = (status: number, what: string): Promise<{ status: number; body: { failing: string[] } }> =>
      eventually(
        async () => {
          const reply = await fetch(`${service.managementUrl}/readyz`, { signal: AbortSignal.timeout(READYZ_ANSWER_MS) });
          const answer = { status: reply.status, body: (await reply.json()) as { failing: string[] } };
          if (answer.status !== status) throw new Error(`GET /readyz answered ${JSON.stringify(answer)}`);
          return answer;
        },
        READYZ_WAIT_MS,
        what,
      );
    expect((await answered(200, 'every dependency ready')).body).toEqual({ status: 'ok', failing: [], checks: { store: 'ok', cache: 'ok', broker: 'ok', gateway: 'ok' } });
    await deps.gateway.down();
    expect((await answered(503, 'readiness off with the gateway down')).body.failing).toEqual(['gateway']);
  }, 3 * (READYZ_WAIT_MS + READYZ_ANSWER_MS));

  it('should reuse one gateway access token across calls', async () => {
    for (let i = 0; i < 5; i++) await postStripeEvent(service.baseUrl, stripeEvent('product.created', productObject()));
    expect(deps.gateway.tokens.accepted).toBeGreaterThanOrEqual(5);
    expect(deps.gateway.tokens.distinct.size).toBe(1);
  });
});
