import { beforeEach, describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { priceObject, productObject, stripeEvent, stripeMockFixtures } from './support/stripe-events.js';
import { useTwoReplicas } from './support/replicas-suite.js';
import { postStripeEvent, type Answer, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';

let deps: Dependencies;
/** Two replicas sharing Redis: deliveries of one batch go to either. */
let replicas: [WebhooksInstance, WebhooksInstance];
useTwoReplicas((suite) => ({ deps, replicas } = suite));

beforeEach(() => {
  deps.gateway.reset();
});

type Json = Record<string, unknown>;
let runCounter = 0;
const freshId = (kind: string): string => `${kind}_order_${Date.now().toString(36)}_${++runCounter}`;
/** A time a while ago, so `created + n` stays in the past. */
const base = (): number => Math.floor(Date.now() / 1000) - 3600;
const at = (event: Json, created: number): Json => ({ ...event, created });

/**
 * Delivers `events` as the provider would: the whole schedule in `order` (every event at least
 * once, some again), `concurrency` at a time to alternating replicas; a delivery not answered
 * 2xx is delivered again later (the provider's retries). Returns the answers that asked for a
 * retry (event type, status and error code), so a failure names the reason.
 */
async function deliver(events: readonly Json[], order: readonly number[], concurrency: number): Promise<string[]> {
  const retries: string[] = [];
  let queue = order.map((index) => events[index]!);
  for (let round = 0; queue.length > 0; round++) {
    if (round > 10) throw new Error(`still not acknowledged after 10 rounds: ${queue.map((e) => String(e.type)).join(', ')}`);
    const retry: Json[] = [];
    for (let start = 0; start < queue.length; start += concurrency) {
      const batch = queue.slice(start, start + concurrency);
      const results = await Promise.all(batch.map((event, i) => postStripeEvent(replicas[(start + i) % 2]!.baseUrl, event)));
      results.forEach((answer: Answer, i) => {
        if (answer.status < 300) return;
        retry.push(batch[i]!);
        retries.push(`${String(batch[i]!.type)}: ${answer.status} ${JSON.stringify(answer.json ?? null)}`);
      });
    }
    queue = retry;
  }
  return retries;
}

/** An order of delivery: every one of `count` events once, plus up to 4 duplicates (redeliveries), shuffled. */
const schedule = (count: number): fc.Arbitrary<number[]> =>
  fc.array(fc.integer({ min: 0, max: count - 1 }), { maxLength: 4 }).chain((extra) => {
    const all = [...Array.from({ length: count }, (_, i) => i), ...extra];
    return fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length });
  });

/** Whether the object is deleted at the end, how many deliveries run at once, and the order. */
const scenario = fc.boolean().chain((deleted) => fc.record({ deleted: fc.constant(deleted), concurrency: fc.integer({ min: 1, max: 3 }), order: schedule(deleted ? 4 : 3) }));

const runs = { numRuns: 30, endOnFailure: true };

describe('out-of-order delivery (property)', () => {
  it('should end with the newest product event applied, a deleted product staying deleted, and never ask for a retry', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ deleted, concurrency, order }) => {
        const id = freshId('prod');
        const t = base();
        const events = [
          at(stripeEvent('product.created', productObject({ id, name: 'v1', active: true })), t),
          at(stripeEvent('product.updated', productObject({ id, name: 'v2', active: false })), t + 10),
          at(stripeEvent('product.updated', productObject({ id, name: 'v3', description: 'newest', active: true })), t + 20),
          at(stripeEvent('product.deleted', productObject({ id, active: false })), t + 30),
        ].slice(0, deleted ? 4 : 3);
        expect(await deliver(events, order, concurrency)).toEqual([]);
        const plans = deps.gateway.data.plans.filter((plan) => plan.providerProductId === id);
        if (deleted) expect(plans).toEqual([]);
        else expect(plans).toEqual([expect.objectContaining({ name: 'v3', description: 'newest', active: true })]);
      }),
      runs,
    );
  });

  it('should end with the newest price event applied (amount and active state), a deleted price staying deleted, and never ask for a retry', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async ({ deleted, concurrency, order }) => {
        const productId = freshId('prod');
        deps.gateway.addPlan({ name: 'Gold', providerProductId: productId });
        const id = freshId('price');
        const t = base();
        const events = [
          at(stripeEvent('price.created', priceObject(productId, { id, unit_amount: 500, active: true })), t),
          at(stripeEvent('price.updated', priceObject(productId, { id, unit_amount: 700, active: false })), t + 10),
          at(stripeEvent('price.updated', priceObject(productId, { id, unit_amount: 900, active: true })), t + 20),
          at(stripeEvent('price.deleted', priceObject(productId, { id, active: false })), t + 30),
        ].slice(0, deleted ? 4 : 3);
        expect(await deliver(events, order, concurrency)).toEqual([]);
        const tiers = deps.gateway.data.priceTiers.filter((tier) => tier.providerPriceId === id);
        if (deleted) expect(tiers).toEqual([]);
        else expect(tiers).toEqual([expect.objectContaining({ amount: 900, active: true })]);
      }),
      runs,
    );
  });
});

describe('stale and deleted objects', () => {
  const now = (): number => Math.floor(Date.now() / 1000);

  it('should keep the newer name when an older product.updated is delivered last, answering it stale', async () => {
    const id = freshId('prod');
    await postStripeEvent(replicas[0].baseUrl, at(stripeEvent('product.created', productObject({ id, name: 'First' })), now() - 60));
    expect((await postStripeEvent(replicas[0].baseUrl, at(stripeEvent('product.updated', productObject({ id, name: 'Newest' })), now() - 10))).json!.result).toBe('processed');
    const old = await postStripeEvent(replicas[1].baseUrl, at(stripeEvent('product.updated', productObject({ id, name: 'Older' })), now() - 30));
    expect(old.json).toEqual({ received: true, result: 'stale' });
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: id, name: 'Newest' })]);
  });

  it('should acknowledge a create or update of a deleted product as stale, without bringing its plan back or asking for retries', async () => {
    const id = freshId('prod');
    const created = at(stripeEvent('product.created', productObject({ id, name: 'Doomed' })), now() - 60);
    expect((await postStripeEvent(replicas[0].baseUrl, at(stripeEvent('product.deleted', productObject({ id, active: false })), now() - 30))).status).toBe(200);
    // A retry of the creation (same event id, never marked done) and a late update, even one newer than the deletion.
    expect((await postStripeEvent(replicas[1].baseUrl, created)).json).toEqual({ received: true, result: 'stale' });
    expect((await postStripeEvent(replicas[0].baseUrl, stripeEvent('product.updated', productObject({ id, name: 'Back?' })))).json).toEqual({ received: true, result: 'stale' });
    expect((await postStripeEvent(replicas[0].baseUrl, stripeEvent('price.created', priceObject(id)))).json).toEqual({ received: true, result: 'stale' });
    expect(deps.gateway.data.plans).toEqual([]);
    expect(deps.gateway.data.priceTiers).toEqual([]);
    expect(deps.gateway.mutations()).toEqual([]);
  });

  it('should read the product from the provider when two events of it carry the same second', async () => {
    const id = freshId('prod');
    const t = now() - 60;
    await postStripeEvent(replicas[0].baseUrl, at(stripeEvent('product.created', productObject({ id, name: 'Same second A' })), t));
    expect((await postStripeEvent(replicas[0].baseUrl, at(stripeEvent('product.updated', productObject({ id, name: 'Same second B' })), t))).json!.result).toBe('processed');
    // stripe-mock answers its fixture product for any id: that state wins, not either event's.
    const fixture = (await stripeMockFixtures()).productName;
    expect(deps.gateway.data.plans).toEqual([expect.objectContaining({ providerProductId: id, name: fixture })]);
  });
});

