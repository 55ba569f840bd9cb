import { beforeEach, describe, expect, it } from '@jest/globals';
import { priceObject, productObject, stripeEvent } from './support/stripe-events.js';
import { smsReplies } from '../src/sms/sms-replies.js';
import { freshPhone, sendSms } from './support/sms-suite.js';
import { LINKS, postStripeEvent, replyText, sleep, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { useStripeWebhooksSuite } from './support/stripe-webhooks-suite.js';

let deps: Dependencies;
let service: WebhooksInstance;
/** The instance gives up on a gateway call after 3 s; the fixture holds the write longer, then applies it. */
const GATEWAY_TIMEOUT_MS = 3000;
useStripeWebhooksSuite((suite) => ({ deps, service } = suite), { gatewayTimeoutMs: GATEWAY_TIMEOUT_MS });

beforeEach(() => {
  deps.gateway.reset();
});

const HELD_MS = GATEWAY_TIMEOUT_MS + 1500;
const base = (): number => Math.floor(Date.now() / 1000) - 3600;
let counter = 0;
const freshId = (kind: string): string => `${kind}_late_${Date.now().toString(36)}_${++counter}`;

/**
 * The unknown-outcome case: a write the service gave up on (503, so the provider retries) lands
 * after a newer event's write. The gateway's version precondition refuses it, and the retry of the
 * older event is `stale`: the newest event's state is final.
 */
describe('a gateway write that lands after its deadline', () => {
  it('should keep the newer price amount when the held older price.updated write lands last', async () => {
    const productId = freshId('prod');
    deps.gateway.addPlan({ name: 'Gold', providerProductId: productId });
    const id = freshId('price');
    const t = base();
    expect((await postStripeEvent(service.baseUrl, { ...stripeEvent('price.created', priceObject(productId, { id, unit_amount: 500 })), created: t })).json!.result).toBe('processed');

    deps.gateway.delayNext({ field: 'updatePriceTier', ms: HELD_MS });
    const older = { ...stripeEvent('price.updated', priceObject(productId, { id, unit_amount: 700 })), created: t + 10 };
    const started = Date.now();
    expect((await postStripeEvent(service.baseUrl, older)).status).toBe(503);
    const newer = { ...stripeEvent('price.updated', priceObject(productId, { id, unit_amount: 900 })), created: t + 20 };
    expect((await postStripeEvent(service.baseUrl, newer)).json).toEqual({ received: true, result: 'processed' });
    expect(deps.gateway.data.priceTiers).toEqual([expect.objectContaining({ providerPriceId: id, amount: 900 })]);

    await sleep(Math.max(0, started + HELD_MS + 500 - Date.now()));
    // The held write did reach the gateway (it carries the older version) and changed nothing.
    expect(deps.gateway.mutations('updatePriceTier').map((op) => (op.variables.input as { amount: number }).amount)).toEqual([700, 900]);
    expect(deps.gateway.data.priceTiers).toEqual([expect.objectContaining({ providerPriceId: id, amount: 900, providerVersion: t + 20 })]);
    expect((await postStripeEvent(service.baseUrl, older)).json).toEqual({ received: true, result: 'stale' });
    expect(deps.gateway.data.priceTiers).toEqual([expect.objectContaining({ amount: 900 })]);
  });

  it('should keep the newer plan name when the held older product.updated write lands last', async () => {
    const id = freshId('prod');
    const t = base();
    expect((await postStripeEvent(service.baseUrl, { ...stripeEvent('product.created', productObject({ id, name: 'v1' })), created: t })).json!.result).toBe('processed');

    deps.gateway.delayNext({ field: 'updatePlan', ms: HELD_MS });
    const older = { ...stripeEvent('product.updated', productObject({ id, name: 'older' })), created: t + 10 };
    const started = Date.now();
    expect((await postStripeEvent(service.baseUrl, older)).status).toBe(503);
    const newer = { ...stripeEvent('product.updated', productObject({ id, name: 'newest' })), created: t + 20 };
    expect((await postStripeEvent(service.baseUrl, newer)).json).toEqual({ received: true, result: 'processed' });

    await sleep(Math.max(0, started + HELD_MS + 500 - Date.now()));
    expect(deps.gateway.mutations('updatePlan')).toHaveLength(2);
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: id, name: 'newest', providerVersion: t + 20 })]);
    expect((await postStripeEvent(service.baseUrl, older)).json).toEqual({ received: true, result: 'stale' });
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ name: 'newest' })]);
  });

  it('should answer stale, changing nothing, when the gateway holds a newer version than the service remembers', async () => {
    // E.g. the store lost its record in a failover: the gateway's precondition still orders the writes.
    const productId = freshId('prod');
    const plan = deps.gateway.addPlan({ name: 'Gold', providerProductId: productId });
    const id = freshId('price');
    const t = base();
    deps.gateway.addPriceTier({ planId: plan.id, providerPriceId: id, amount: 900, providerVersion: t + 20 });
    const older = { ...stripeEvent('price.created', priceObject(productId, { id, unit_amount: 700 })), created: t + 10 };
    // No version is known to the service, and the tier exists: the service reads stripe-mock's price
    // (at the event's version), which the gateway refuses as older than what it holds.
    expect((await postStripeEvent(service.baseUrl, older)).json).toEqual({ received: true, result: 'stale' });
    expect(deps.gateway.data.priceTiers).toEqual([expect.objectContaining({ amount: 900, providerVersion: t + 20 })]);
  });
});

describe('an UNSUB whose gateway write lands after its deadline', () => {
  it('should not end the subscription the subscriber made after the UNSUB: only one that began before the command arrived ends', async () => {
    const client = deps.gateway.addClient({ number: 41, name: 'Late Shop', phoneNumber: freshPhone() });
    const subscriber = freshPhone();
    deps.gateway.addSubscriber(client.id, subscriber, null, new Date(Date.now() - 60_000));

    deps.gateway.delayNext({ field: 'unsubscribe', ms: HELD_MS });
    const started = Date.now();
    expect(replyText(await sendSms(service, subscriber, 'UNSUB 41'))).toBe(smsReplies.tryLater());
    // Meanwhile the subscriber left (another way) and subscribed again: a subscription that began after the UNSUB.
    deps.gateway.data.subscriptions.splice(deps.gateway.data.subscriptions.findIndex((s) => s.phoneNumber === subscriber), 1);
    deps.gateway.addSubscriber(client.id, subscriber, 'de');

    await sleep(Math.max(0, started + HELD_MS + 500 - Date.now()));
    // The held write did reach the gateway, carrying the time the UNSUB arrived, and ended nothing.
    expect(deps.gateway.mutations('unsubscribe')).toHaveLength(1);
    expect(deps.gateway.data.subscriptions.filter((s) => s.phoneNumber === subscriber)).toEqual([expect.objectContaining({ clientId: client.id, locale: 'de' })]);

    // A new UNSUB (after the new subscription began) ends it.
    expect(replyText(await sendSms(service, subscriber, 'UNSUB 41'))).toBe(smsReplies.unsubscribed('Late Shop', 41, LINKS));
    expect(deps.gateway.data.subscriptions.filter((s) => s.phoneNumber === subscriber)).toEqual([]);
  });
});
