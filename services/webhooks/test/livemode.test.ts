import { afterAll, beforeEach, describe, expect, it } from '@jest/globals';
import { productObject, stripeEvent } from './support/stripe-events.js';
import { counterValue, postStripeEvent, startWebhooks, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { useStripeWebhooksSuite } from './support/stripe-webhooks-suite.js';

let deps: Dependencies;
/** Configured with a test-mode key (sk_test_…), as every test instance. */
let service: WebhooksInstance;
useStripeWebhooksSuite((suite) => ({ deps, service } = suite));

let live: WebhooksInstance | undefined;
afterAll(async () => {
  await live?.close();
});

beforeEach(() => {
  deps.gateway.reset();
});

const inMode = (event: Record<string, unknown>, livemode: boolean): Record<string, unknown> => ({ ...event, livemode });

describe('events of the other mode than the configured API key', () => {
  it('should refuse a live-mode event at a test-mode deployment with 400, doing nothing, counting and keeping the event id free', async () => {
    const before = deps.events.events.length;
    const mismatches = await counterValue(service.registry, 'webhook_livemode_mismatches_total', { event_mode: 'live' });
    const product = productObject();
    const event = stripeEvent('product.created', product);
    const answer = await postStripeEvent(service.baseUrl, inMode(event, true));
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({ error: "live-mode event refused: this deployment's PAYMENT_PROVIDER_API_KEY is a test-mode key" });
    // An unlisted type too: nothing of the other mode is acknowledged.
    expect((await postStripeEvent(service.baseUrl, inMode(stripeEvent('invoice.paid', { object: 'invoice' }), true))).status).toBe(400);
    expect(await counterValue(service.registry, 'webhook_livemode_mismatches_total', { event_mode: 'live' })).toBe(mismatches + 2);
    expect(deps.gateway.received).toEqual([]);
    expect(deps.events.events.length).toBe(before);
    // The refusal claimed nothing: the same event id in this deployment's mode is processed.
    expect((await postStripeEvent(service.baseUrl, inMode(event, false))).json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: product.id })]);
  });

  it('should refuse a test-mode event at a live-mode deployment and process a live-mode one', async () => {
    live = await startWebhooks(deps, { paymentProviderApiKey: 'sk_live_4eC39HqLyjWDarjtT1zdp7dc' });
    const product = productObject({ livemode: true });
    const testEvent = await postStripeEvent(live.baseUrl, inMode(stripeEvent('product.created', product), false));
    expect(testEvent.status).toBe(400);
    expect(testEvent.json).toEqual({ error: "test-mode event refused: this deployment's PAYMENT_PROVIDER_API_KEY is a live-mode key" });
    expect(deps.gateway.received).toEqual([]);
    expect(await counterValue(live.registry, 'webhook_livemode_mismatches_total', { event_mode: 'test' })).toBe(1);
    expect((await postStripeEvent(live.baseUrl, inMode(stripeEvent('product.created', product), true))).json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: product.id })]);
  });
});
