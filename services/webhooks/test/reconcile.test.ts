import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { checkoutSessionObject, priceObject, productObject, stripeEvent, stripeMockFixtures } from './support/stripe-events.js';
import type { StripeMockFixtures } from './support/stripe-webhooks-suite.js';
import { startStripeEventsApi, type StripeEventsApi } from './support/stripe-events-api.js';
import { adminCall, ADMIN_KEYS, reconcileOptions } from './support/admin-api.js';
import { counterValue, postStripeEvent, startDependencies, startWebhooks, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { runningClock } from '../../../test/support/test-clock.js';

let deps: Dependencies;
let api: StripeEventsApi;
let mock: StripeMockFixtures;
/** Two replicas sharing Redis, the broker, the gateway and the events API stand-in. */
let replicas: [WebhooksInstance, WebhooksInstance];
let restarted: WebhooksInstance | undefined;

beforeAll(async () => {
  deps = await startDependencies();
  api = await startStripeEventsApi();
  mock = await stripeMockFixtures();
  replicas = [await startWebhooks(deps, reconcileOptions(api.url)), await startWebhooks(deps, reconcileOptions(api.url))];
});

afterAll(async () => {
  // The restart test replaced replicas[0] with the restarted instance (each closed once).
  await Promise.all([...new Set([...(replicas ?? []), restarted])].flatMap((replica) => (replica === undefined ? [] : [replica.close()])));
  await api?.close();
  await deps?.close();
});

beforeEach(() => {
  deps.gateway.reset();
  api.reset();
});

const foreignProducts = (productId: unknown): ConsumedEvent[] => deps.events.events.filter((e) => e.topic === deps.topics.foreignProducts && e.key === productId);
const payments = (sessionId: unknown): ConsumedEvent[] => deps.events.events.filter((e) => e.topic === deps.topics.payments && e.key === sessionId);

/** Once an event published later has arrived, every earlier one has (one partition, in order). */
async function settle(): Promise<void> {
  const marker = productObject({ metadata: { planId: `marker-${Date.now()}` } });
  await postStripeEvent(replicas[0].baseUrl, stripeEvent('product.created', marker));
  await deps.events.waitFor((e) => e.key === marker.id);
}

/** A product.created the platform made (metadata.planId): processing it publishes one ProviderProductCreatedEvent. */
const platformProductCreated = (): Record<string, unknown> => stripeEvent('product.created', productObject({ metadata: { planId: `plan-${Date.now()}-${Math.random()}` } }));
const productOf = (event: Record<string, unknown>): unknown => (event.data as { object: { id: string } }).object.id;

/** The event as if Stripe had created it at `created` (Unix seconds). */
const createdAt = (event: Record<string, unknown>, created: number): Record<string, unknown> => ({ ...event, created });

const reconciled = (replica: WebhooksInstance, result: string): Promise<number> => counterValue(replica.registry, 'webhook_reconciled_events_total', { source: 'reconcile', result });

describe('reconciliation with the payment provider', () => {
  it('should process once an event the API lists that was never delivered: one record, one Kafka event', async () => {
    const event = platformProductCreated();
    api.add(event);
    const processedBefore = await reconciled(replicas[0], 'processed');

    expect(await replicas[0].sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 0 });
    await deps.events.waitFor((e) => e.key === productOf(event));
    expect(await replicas[1].sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 0 });

    await settle();
    expect(foreignProducts(productOf(event))).toHaveLength(1);
    expect(await reconciled(replicas[0], 'processed')).toBe(processedBefore + 1);
    const record = await adminCall(replicas[0].baseUrl, 'GET', `/api/events/${event.id as string}`);
    expect(record.json).toMatchObject({ id: event.id, type: 'product.created', created: event.created, outcome: 'processed', source: 'reconcile', deliveries: 2, failures: 0 });
    const listed = await adminCall(replicas[1].baseUrl, 'GET', '/api/events?type=product.created&limit=100');
    expect((listed.json!.events as { id: string }[]).filter((e) => e.id === event.id)).toHaveLength(1);
  });

  it('should not process twice an event that was delivered and is listed', async () => {
    const event = platformProductCreated();
    expect((await postStripeEvent(replicas[0].baseUrl, event)).json).toEqual({ received: true, result: 'processed' });
    api.add(event);
    const duplicatesBefore = await reconciled(replicas[1], 'duplicate');

    expect(await replicas[1].sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 0 });

    await settle();
    expect(foreignProducts(productOf(event))).toHaveLength(1);
    expect(await reconciled(replicas[1], 'duplicate')).toBe(duplicatesBefore + 1);
    const record = await adminCall(replicas[1].baseUrl, 'GET', `/api/events/${event.id as string}`);
    expect(record.json).toMatchObject({ outcome: 'processed', source: 'reconcile', deliveries: 2 });
  });

  it('should process each event once when two replicas sweep at the same moment, over several pages', async () => {
    const events = Array.from({ length: 7 }, platformProductCreated);
    for (const event of events) api.add(event);
    const before = (await reconciled(replicas[0], 'processed')) + (await reconciled(replicas[1], 'processed'));

    const reports = await Promise.all([replicas[0].sweeper.sweepOnce(), replicas[1].sweeper.sweepOnce()]);

    expect(reports.some((report) => report.swept)).toBe(true);
    await settle();
    for (const event of events) expect(foreignProducts(productOf(event))).toHaveLength(1);
    expect((await reconciled(replicas[0], 'processed')) + (await reconciled(replicas[1], 'processed'))).toBe(before + events.length);
    // Pages of 3 (reconcileOptions): the sweep followed `starting_after` to the end, listing only the handled types.
    const pages = api.listRequests.filter((request) => request.limit === 3);
    expect(pages.length).toBeGreaterThanOrEqual(3);
    expect(pages[0]!.types).toEqual(expect.arrayContaining(['checkout.session.completed', 'product.created', 'price.deleted']));
    expect(pages[0]!.types).not.toContain('customer.created');
  });

  it('should leave the cursor where it was and drop the lease when the API fails, so the next sweep lists the same events', async () => {
    const failedBefore = await counterValue(replicas[0].registry, 'webhook_reconcile_sweeps_total', { result: 'failed' });
    api.failNext(10);
    await expect(replicas[0].sweeper.sweepOnce()).rejects.toMatchObject({ status: 503 });
    expect(await counterValue(replicas[0].registry, 'webhook_reconcile_sweeps_total', { result: 'failed' })).toBe(failedBefore + 1);

    api.failNext(0);
    const event = platformProductCreated();
    api.add(event);
    // The other replica is not locked out by the failed sweep's lease.
    expect(await replicas[1].sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 0 });
    await deps.events.waitFor((e) => e.key === productOf(event));
  });
});

describe('replay through the admin API', () => {
  it('should process once a checkout answered 409 (unknown client) after the client was created, and answer a second replay duplicate with no side effect', async () => {
    deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
    const session = checkoutSessionObject();
    const event = stripeEvent('checkout.session.completed', session);
    const id = event.id as string;

    const delivered = await postStripeEvent(replicas[0].baseUrl, event);
    expect(delivered.status).toBe(409);
    const failed = await adminCall(replicas[1].baseUrl, 'GET', `/api/events/${id}`);
    expect(failed.json).toMatchObject({ outcome: 'failed', source: 'webhook', deliveries: 1, failures: 1, error: { code: 'not_synchronized' } });

    api.add(event);
    deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
    const replayed = await adminCall(replicas[1].baseUrl, 'POST', `/api/events/${id}/replay`);
    expect(replayed.status).toBe(200);
    expect(replayed.json).toMatchObject({ result: 'processed', event: { id, outcome: 'processed', source: 'replay', deliveries: 2, failures: 0 } });
    expect((replayed.json!.event as Record<string, unknown>).error).toBeUndefined();
    await deps.events.waitFor((e) => e.topic === deps.topics.payments && e.key === session.id);

    const again = await adminCall(replicas[0].baseUrl, 'POST', `/api/events/${id}/replay`);
    expect(again.status).toBe(200);
    expect(again.json).toMatchObject({ result: 'duplicate', event: { outcome: 'processed', deliveries: 3 } });

    await settle();
    expect(payments(session.id)).toHaveLength(1);
    expect(deps.gateway.mutations('createPaymentConfirmation')).toHaveLength(1);
    expect(deps.gateway.mutations('createPlanSubscription')).toHaveLength(1);
  });

  it('should answer 404 for an event the payment provider does not know, and change nothing', async () => {
    const answer = await adminCall(replicas[0].baseUrl, 'POST', '/api/events/evt_unknown_to_stripe/replay');
    expect(answer.status).toBe(404);
    expect((await adminCall(replicas[0].baseUrl, 'GET', '/api/events/evt_unknown_to_stripe')).status).toBe(404);
  });

  it('should require the admin key: none or a wrong one is 401 and replays nothing; the current and the previous key work', async () => {
    const event = platformProductCreated();
    api.add(event);
    const path = `/api/events/${event.id as string}/replay`;
    for (const key of [null, 'wrong-key', 'test-webhooks-code-0123456789abcdef', `${ADMIN_KEYS[0]}x`]) {
      const answer = await adminCall(replicas[0].baseUrl, 'POST', path, key);
      expect(answer.status).toBe(401);
      expect(answer.json).toEqual({ error: 'unauthorized' });
      expect((await adminCall(replicas[0].baseUrl, 'GET', '/api/events', key)).status).toBe(401);
    }
    expect((await adminCall(replicas[0].baseUrl, 'GET', `/api/events/${event.id as string}`)).status).toBe(404);

    expect((await adminCall(replicas[0].baseUrl, 'GET', '/api/events?limit=1', ADMIN_KEYS[0])).status).toBe(200);
    expect((await adminCall(replicas[0].baseUrl, 'POST', path, ADMIN_KEYS[1])).json).toMatchObject({ result: 'processed' });
  });

  it('should refuse bad queries with 400 naming the parameter', async () => {
    for (const [query, problem] of [
      ['outcome=lost', 'outcome'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['since=yesterday', 'since'],
      ['cursor=bm9wZQ', 'cursor'],
    ] as const) {
      const answer = await adminCall(replicas[0].baseUrl, 'GET', `/api/events?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.json!.error).toMatch(new RegExp(`^${problem}: `));
    }
  });
});

describe('the event log', () => {
  it('should show each outcome, and filter by outcome, type and time', async () => {
    const since = Date.now();
    deps.gateway.addPlan({ name: 'Gold', providerProductId: mock.productId });
    deps.gateway.addClient({ number: 7, name: 'Corner Shop', phoneNumber: '+15550001111', providerCustomerId: mock.customerId });
    const session = checkoutSessionObject();
    const product = productObject();
    const now = Math.floor(Date.now() / 1000);
    const events = {
      processed: stripeEvent('checkout.session.completed', session),
      duplicate: stripeEvent('checkout.session.async_payment_succeeded', session),
      deferred: stripeEvent('checkout.session.completed', checkoutSessionObject({ payment_status: 'unpaid' })),
      stale: createdAt(stripeEvent('product.updated', product), now - 10),
      ignored: stripeEvent('customer.created', { id: 'cus_log_test', object: 'customer' }),
      failed: stripeEvent('price.created', priceObject('prod_without_plan')),
      // Failed more than three days after it was created: Stripe retries no more.
      dead: createdAt(stripeEvent('price.created', priceObject('prod_without_plan')), now - 4 * 24 * 60 * 60),
    };
    expect((await postStripeEvent(replicas[0].baseUrl, stripeEvent('product.updated', product))).json).toEqual({ received: true, result: 'processed' });
    const answers = [];
    for (const event of Object.values(events)) answers.push((await postStripeEvent(replicas[0].baseUrl, event)).status);
    expect(answers).toEqual([200, 200, 200, 200, 200, 409, 409]);

    for (const [outcome, event] of Object.entries(events)) {
      const record = await adminCall(replicas[1].baseUrl, 'GET', `/api/events/${event.id as string}`);
      expect(record.json).toMatchObject({ outcome, source: 'webhook', deliveries: 1 });
      const listed = await adminCall(replicas[1].baseUrl, 'GET', `/api/events?outcome=${outcome}&since=${new Date(since).toISOString()}&limit=100`);
      expect((listed.json!.events as { id: string; outcome: string }[]).map((e) => e.id)).toContain(event.id);
      expect(new Set((listed.json!.events as { outcome: string }[]).map((e) => e.outcome))).toEqual(new Set([outcome]));
    }
    const byType = await adminCall(replicas[1].baseUrl, 'GET', `/api/events?type=price.created&since=${since}`);
    expect((byType.json!.events as { id: string }[]).map((e) => e.id).sort()).toEqual([events.failed.id, events.dead.id].sort());
    expect((await adminCall(replicas[1].baseUrl, 'GET', `/api/events?since=${Date.now() + 60_000}`)).json).toEqual({ events: [] });
  });

  it('should page newest first seen first with the cursor, each event once', async () => {
    const since = Date.now();
    const events = Array.from({ length: 5 }, () => stripeEvent('customer.created', { id: 'cus_page_test', object: 'customer' }));
    for (const event of events) await postStripeEvent(replicas[0].baseUrl, event);
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await adminCall(replicas[0].baseUrl, 'GET', `/api/events?since=${since}&limit=2${cursor === undefined ? '' : `&cursor=${cursor}`}`);
      const ids = (page.json!.events as { id: string }[]).map((e) => e.id);
      expect(ids.length).toBeLessThanOrEqual(2);
      seen.push(...ids);
      cursor = page.json!.next as string | undefined;
    } while (cursor !== undefined);
    expect(seen).toEqual(events.map((e) => e.id).reverse());
  });
});

describe('dead letters', () => {
  const deadGauge = async (replica: WebhooksInstance): Promise<number> => counterValue(replica.registry, 'webhook_dead_letters');
  const deadIds = async (replica: WebhooksInstance): Promise<string[]> =>
    ((await adminCall(replica.baseUrl, 'GET', '/api/events?outcome=dead&limit=100')).json!.events as { id: string }[]).map((e) => e.id);

  it('should mark an event dead after Webhooks__DeadAfterFailures failures, count it in the gauge, list it until a replay succeeds', async () => {
    const before = await deadGauge(replicas[0]);
    const product = productObject();
    const event = stripeEvent('price.created', priceObject(product.id as string));
    const path = `/api/events/${event.id as string}`;

    for (const outcome of ['failed', 'failed', 'dead']) {
      expect((await postStripeEvent(replicas[0].baseUrl, event)).status).toBe(409);
      expect((await adminCall(replicas[1].baseUrl, 'GET', path)).json).toMatchObject({ outcome, error: { code: 'not_synchronized' } });
    }
    expect(await deadGauge(replicas[0])).toBe(before + 1);
    expect(await deadGauge(replicas[1])).toBe(before + 1);
    const dead = await adminCall(replicas[1].baseUrl, 'GET', '/api/events?outcome=dead&limit=100');
    expect((dead.json!.events as { id: string }[]).map((e) => e.id)).toContain(event.id);

    deps.gateway.addPlan({ name: 'Gold', providerProductId: product.id as string });
    api.add(event);
    expect((await adminCall(replicas[1].baseUrl, 'POST', `${path}/replay`)).json).toMatchObject({ result: 'processed', event: { outcome: 'processed', failures: 0 } });
    expect(await deadGauge(replicas[0])).toBe(before);
    const after = await adminCall(replicas[1].baseUrl, 'GET', '/api/events?outcome=dead&limit=100');
    expect((after.json!.events as { id: string }[]).map((e) => e.id)).not.toContain(event.id);
  });

  it('should drop a dead letter from the gauge and the admin API once Webhooks__EventLogDays have passed on the service clock', async () => {
    const clock = runningClock();
    const late = await startWebhooks(deps, { ...reconcileOptions(api.url, { Webhooks__EventLogDays: '1' }), clock });
    try {
      const before = await deadGauge(late);
      const event = stripeEvent('price.created', priceObject(productObject().id as string));
      for (let i = 0; i < 3; i += 1) expect((await postStripeEvent(late.baseUrl, event)).status).toBe(409);
      expect(await deadGauge(late)).toBe(before + 1);
      expect(await deadIds(late)).toContain(event.id);

      clock.advance(24 * 60 * 60 * 1000);
      expect(await deadGauge(late)).toBe(0);
      expect(await deadIds(late)).toEqual([]);
      expect((await adminCall(late.baseUrl, 'GET', `/api/events/${event.id as string}`)).status).toBe(404);
    } finally {
      await late.close();
    }
  });
});

describe('the cursor', () => {
  it('should stay at an event that failed, survive a restart, and move on once the event is processed', async () => {
    const product = productObject();
    const event = createdAt(stripeEvent('price.created', priceObject(product.id as string)), Math.floor(Date.now() / 1000) - 300);
    api.add(event);
    expect(await replicas[0].sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 1 });

    // A restart: a new instance on the same store lists from the stored cursor (the failed event's
    // `created`) minus the 600 s overlap, not from its own start.
    await replicas[0].close();
    restarted = await startWebhooks(deps, reconcileOptions(api.url));
    replicas[0] = restarted;
    api.listRequests.length = 0;
    expect(await restarted.sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 1 });
    expect(api.listRequests[0]!.createdGte).toBe((event.created as number) - 600);

    deps.gateway.addPlan({ name: 'Gold', providerProductId: product.id as string });
    expect(await restarted.sweeper.sweepOnce()).toEqual({ swept: true, events: 1, failed: 0 });
    expect((await adminCall(restarted.baseUrl, 'GET', `/api/events/${event.id as string}`)).json).toMatchObject({ outcome: 'processed', source: 'reconcile', deliveries: 3 });
    api.listRequests.length = 0;
    const sweptAt = Math.floor(Date.now() / 1000);
    await restarted.sweeper.sweepOnce();
    expect(api.listRequests[0]!.createdGte).toBeGreaterThanOrEqual(sweptAt - 600 - 5);
  });

  it('should sweep on its schedule and stop cleanly when the service closes', async () => {
    const scheduled = await startWebhooks(deps, reconcileOptions(api.url, { PaymentProvider__ReconcileIntervalSeconds: '1' }));
    const event = platformProductCreated();
    api.add(event);
    await deps.events.waitFor((e) => e.key === productOf(event));
    await scheduled.close();
    const sweeps = await counterValue(scheduled.registry, 'webhook_reconcile_sweeps_total');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    expect(await counterValue(scheduled.registry, 'webhook_reconcile_sweeps_total')).toBe(sweeps);
  });
});
