// make bench: signed `price.updated` payment provider events per second, end to end. The webhooks
// service runs as a child process from its build (services/webhooks/dist/main.js, as `npm start`
// runs it) against the real dependencies: the shared Redis (STORE_URL, claim and done marker per
// event), the shared Keycloak (one client-credentials token, cached) and the GraphQL gateway fixture
// of the tests (test/support/graphql-gateway.ts: graphql-js over HTTP, JWT checked against
// Keycloak's JWKS on every call), which runs in this process together with the load generator.
// Each request is a fresh event (new id, so never a duplicate) for one of 100 price tiers, signed
// with the Stripe library at the current time; each is verified, claimed in Redis, looked up and
// updated through the gateway (two GraphQL calls), and marked done in Redis.
// For comparison: the cost of signature verification alone, stripe.webhooks.constructEvent on one
// payload in a loop. Results: bench/results/webhooks.json.
import { randomUUID } from 'node:crypto';
import { Agent, request } from 'node:http';
import { loadavg } from 'node:os';
import { registerHooks } from 'node:module';
import { fileURLToPath } from 'node:url';
import Stripe from 'stripe';
import { drive, freePort, infraEnv, median, startChild, stopChild, writeResults, type RunFigures } from './lib/stats.ts';

// The test fixtures are TypeScript sources whose imports name the emitted `.js` files (as tsc and
// jest want); Node strips the types but does not map the extensions, so this hook does.
registerHooks({
  resolve(specifier, context, nextResolve) {
    try {
      return nextResolve(specifier, context);
    } catch (err) {
      if (!specifier.startsWith('.') || !specifier.endsWith('.js')) throw err;
      return nextResolve(`${specifier.slice(0, -3)}.ts`, context);
    }
  },
});
const { startGraphqlGateway } = await import('../test/support/graphql-gateway.ts');

const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 16);
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 6) * 1000;
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TIERS = 100;
const API_KEY = 'bench-webhooks-code-0123456789abcdef';
const SECRET = 'whsec_bench_0123456789abcdef0123456789';
const SIGNATURE_ITERATIONS = 20_000;

const webhooksMain = fileURLToPath(new URL('../services/webhooks/dist/main.js', import.meta.url));
const stripe = new Stripe('sk_test_4eC39HqLyjWDarjtT1zdp7dc');

/**
 * The service applies a change of a price only when its event is newer than the last one applied
 * (`created`, Unix seconds). Each event of a run is one second newer than the one before, starting
 * in the past; events of one tier are TIERS apart and at most CONCURRENCY are in flight, so each
 * arrives after the previous one of its tier and is applied (none is stale, none ties).
 */
const firstCreated = Math.floor(Date.now() / 1000) - 10_000_000;

function priceUpdated(tier: number, amount: number, sequence: number): string {
  const now = Math.floor(Date.now() / 1000);
  return JSON.stringify({
    id: `evt_bench_${randomUUID().replace(/-/g, '')}`,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created: firstCreated + sequence,
    data: {
      object: {
        id: `price_bench_${tier}`,
        object: 'price',
        active: true,
        billing_scheme: 'per_unit',
        created: now - 3600,
        currency: 'usd',
        livemode: false,
        lookup_key: null,
        metadata: {},
        nickname: null,
        product: 'prod_bench',
        recurring: { interval: 'month', interval_count: 1, meter: null, trial_period_days: null, usage_type: 'licensed' },
        tax_behavior: 'unspecified',
        tiers_mode: null,
        transform_quantity: null,
        type: 'recurring',
        unit_amount: amount,
        unit_amount_decimal: String(amount),
      },
      previous_attributes: { unit_amount: amount - 1 },
    },
    livemode: false,
    pending_webhooks: 1,
    request: { id: null, idempotency_key: null },
    type: 'price.updated',
  });
}

/** constructEvent in a loop on one payload and header: HMAC-SHA256 over the body, the timestamp check, JSON.parse. */
function signatureVerification(): { opsPerSecond: number; microsPerOp: number } {
  const payload = priceUpdated(0, 1000, 0);
  const header = stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET });
  for (let i = 0; i < 2000; i++) stripe.webhooks.constructEvent(payload, header, SECRET, 300);
  const started = process.hrtime.bigint();
  for (let i = 0; i < SIGNATURE_ITERATIONS; i++) stripe.webhooks.constructEvent(payload, header, SECRET, 300);
  const micros = Number(process.hrtime.bigint() - started) / 1000;
  return { opsPerSecond: Math.round((SIGNATURE_ITERATIONS / micros) * 1e6), microsPerOp: Number((micros / SIGNATURE_ITERATIONS).toFixed(2)) };
}

async function main(): Promise<void> {
  const infra = infraEnv();
  const gateway = await startGraphqlGateway({
    keycloakUrl: infra.KEYCLOAK_URL,
    realm: infra.KEYCLOAK_REALM,
    allowedClientIds: [infra.KEYCLOAK_SERVICES_CLIENT_ID!],
  });
  const plan = gateway.addPlan({ name: 'Bench', providerProductId: 'prod_bench' });
  for (let tier = 0; tier < TIERS; tier++) gateway.addPriceTier({ planId: plan.id, providerPriceId: `price_bench_${tier}`, amount: 1000 });
  const port = await freePort();
  const child = await startChild(
    process.execPath,
    ['--enable-source-maps', webhooksMain],
    {
      Webhooks__Port: String(port),
      Webhooks__Host: '127.0.0.1',
      Management__Port: String(await freePort()),
      Webhooks__PublicBaseUrl: `http://127.0.0.1:${port}`,
      WEBHOOKS_API_KEY: API_KEY,
      PAYMENT_PROVIDER_API_KEY: 'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
      PAYMENT_PROVIDER_API_URL: infra.STRIPE_MOCK_URL,
      PAYMENT_PROVIDER_WEBHOOKS_SECRET: SECRET,
      SMS_PROVIDER_ACCOUNT_SID: `AC${'0123456789abcdef'.repeat(2)}`,
      SMS_PROVIDER_AUTH_TOKEN: 'bench-twilio-token',
      GRAPHQL_API_URL: gateway.url,
      LOCALIZATION_API_URL: 'http://127.0.0.1:9',
      STORE_URL: infra.REDIS_URL,
      Cache__Url: '127.0.0.1:9',
      MessageBroker__BrokerList: infra.KAFKA_BROKERS,
      AccountUrl: 'https://app.example.com/account',
      BillingPortalUrl: 'https://billing.example.com',
      ClientLinkBaseUri: 'https://app.example.com/c',
      Oidc__ServerUrl: infra.KEYCLOAK_URL,
      Oidc__Realm: infra.KEYCLOAK_REALM,
      Oidc__ClientId: infra.KEYCLOAK_SERVICES_CLIENT_ID,
      Oidc__ClientSecret: infra.KEYCLOAK_SERVICES_CLIENT_SECRET,
      Log__Level: 'info',
    },
    /webhooks service listening/,
  );
  const url = `http://127.0.0.1:${port}/api/PaymentProviderWebhookHandler?code=${API_KEY}`;
  let answered = 0;
  // node:http with keep-alive rather than fetch: the load generator shares its core with the
  // gateway fixture, so it should cost as little as possible.
  const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
  const post = (payload: string): Promise<{ status: number; body: string }> =>
    new Promise((resolve, reject) => {
      const body = Buffer.from(payload);
      const headers = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': body.length,
        'stripe-signature': stripe.webhooks.generateTestHeaderString({ payload, secret: SECRET }),
      };
      const req = request(url, { method: 'POST', agent, headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.once('error', reject);
      });
      req.once('error', reject);
      req.end(body);
    });
  /** Events sent over all rounds (each round counts `i` from 0 again): orders their `created`. */
  let sent = 0;
  const send = async (i: number): Promise<void> => {
    const { status, body } = await post(priceUpdated(i % TIERS, 1000 + (i % 5000), sent++));
    if (status !== 200 || !body.includes('"processed"')) throw new Error(`answered ${status} ${body}`);
    answered++;
  };
  await send(0); // fails the run at once if anything is misconfigured
  const runs: RunFigures[] = [];
  const loadBefore = loadavg()[0]!;
  let signature: { opsPerSecond: number; microsPerOp: number };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const figures = await drive(send, CONCURRENCY, DURATION_MS, child.pid);
      runs.push(figures);
      process.stdout.write(`round ${round + 1}: ${figures.opsPerSecond} events/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.serverCpuMicrosPerOp} µs service CPU/event, ${figures.errors} errors\n`);
    }
    signature = signatureVerification();
  } finally {
    agent.destroy();
    await stopChild(child);
    await gateway.close();
  }
  const endToEnd = median(runs);
  const updates = gateway.mutations('updatePriceTier').length;
  writeResults('webhooks', {
    benchmark: 'webhooks: signed price.updated events, end to end',
    date: new Date().toISOString(),
    node: process.version,
    setup: {
      service: 'child process from the build (dist/main.js), as npm start runs it, tracing off',
      loadGenerator: `this process: ${CONCURRENCY} requests in flight (node:http keep-alive), each a new event id, signed with the Stripe library`,
      gateway: 'the tests\' GraphQL fixture (graphql-js over HTTP, bearer JWT verified against Keycloak\'s JWKS per call), in this process',
      dependencies: 'shared Redis (claim + done marker per event), shared Keycloak (token fetched once and cached)',
      perEvent: 'signature check, validation, Redis claim (Lua), the price\'s claim and applied version (Redis), priceTierByProviderPriceId + updatePriceTier through the gateway, version recorded, Redis done marker (Lua)',
      durationMsPerRound: DURATION_MS,
      rounds: ROUNDS,
      summary: 'the round with the median throughput',
      /** 1-minute load average of the 2-core machine before and after (other work shares it). */
      loadAverage: { before: Number(loadBefore.toFixed(2)), after: Number(loadavg()[0]!.toFixed(2)) },
    },
    endToEnd: { ...endToEnd, runs },
    signatureVerificationOnly: { ...signature, iterations: SIGNATURE_ITERATIONS, what: 'stripe.webhooks.constructEvent on one ~1.3 KB payload, this process' },
    /** Share of the service's per-event CPU spent verifying the signature. */
    signatureShareOfServiceCpu: endToEnd.serverCpuMicrosPerOp ? Number((signature.microsPerOp / endToEnd.serverCpuMicrosPerOp).toFixed(3)) : null,
    checks: {
      eventsAnswered200Processed: answered,
      updatePriceTierMutationsAtGateway: updates,
      distinctGatewayTokens: gateway.tokens.distinct.size,
    },
  });
  if (updates < answered) throw new Error(`${answered} events answered processed but only ${updates} updates reached the gateway`);
}

await main();
