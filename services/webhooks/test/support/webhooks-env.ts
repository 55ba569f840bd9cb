import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import twilio from 'twilio';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { createRegistry, type Registry } from '@sp/observability';
import { closeGracefully, listen, requestListener, startManagementServer, type ManagementServer } from '@sp/http';
import { PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import type { ProcessingStore } from '../../src/events/processing-store.js';
import type { Topics } from '../../src/topics.js';
import type { EventLog } from '../../src/events/event-log.js';
import type { Sweeper } from '../../src/payments/reconcile-sweeper.js';
import { createStores } from '../../src/stores.js';
import { wireWebhooks, type WebhooksOverrides } from '../../src/webhooks.js';
import { startCacheService, type RunningCacheService } from '../../../../test/support/cache-service.js';
import { startGraphqlGateway, type GraphqlGatewayFixture } from '../../../../test/support/graphql-gateway.js';
import { infra } from '../../../../test/support/infra.js';
import { eventually } from '../../../../test/support/eventually.js';
import { collectEvents, type EventCollector } from '../../../../test/support/kafka.js';
import { startLocalizationService, type LocalizationServiceFixture } from '../../../../test/support/localization-service.js';
import { silentLogger } from '../../../../test/support/silent-logger.js';
import type { TestClock } from '../../../../test/support/test-clock.js';
import { assertDocumented } from './openapi-contract.js';
import { signStripe } from './stripe-events.js';

export const API_KEY = 'test-webhooks-code-0123456789abcdef';
export const ROTATED_API_KEY = 'test-webhooks-code-next-fedcba9876';
export const STRIPE_SECRETS = ['whsec_test_current_0123456789abcdef', 'whsec_test_next_fedcba9876543210'] as const;
export const TWILIO_TOKENS = ['twilio-auth-token-current-0123456789', 'twilio-auth-token-next-9876543210'] as const;
export const ACCOUNT_SID = `AC${'0123456789abcdef'.repeat(2)}`;
export const PUBLIC_BASE_URL = 'https://webhooks.example.com';
export const LINKS = { account: 'https://app.example.com/account', billingPortal: 'https://billing.example.com/portal', clientBase: 'https://app.example.com/c' };
export const DRAFT_TTL_MS = 24 * 60 * 60 * 1000;

/** The dependencies a webhooks instance runs against: real ones, each the test's own or isolated by name. */
export interface Dependencies {
  gateway: GraphqlGatewayFixture;
  localization: LocalizationServiceFixture;
  cache: RunningCacheService;
  /** Reads what the service stored in the cache service (drafts). */
  cacheClient: CacheClient<string>;
  /** Topics of this test file only, so events of other runs never mix in. */
  topics: Topics;
  events: EventCollector;
  /** The shared Redis, with a key prefix of this test file only. */
  redisUrl: string;
  keyPrefix: string;
  close(): Promise<void>;
}

export async function startDependencies(): Promise<Dependencies> {
  const run = randomUUID().slice(0, 8);
  const topics = { payments: `test-payments-${run}`, notifications: `test-notifications-${run}`, foreignProducts: `test-foreign-products-${run}` };
  const [gateway, localization, cache, events] = await Promise.all([
    startGraphqlGateway(),
    startLocalizationService(),
    startCacheService(),
    collectEvents(Object.values(topics)),
  ]);
  const cacheClient = createCacheClient<string>({ address: cache.address }, stringSerializer);
  return {
    gateway,
    localization,
    cache,
    cacheClient,
    topics,
    events,
    redisUrl: infra('REDIS_URL'),
    keyPrefix: `test-webhooks:${run}:`,
    close: async () => {
      cacheClient.close();
      await Promise.all([gateway.close(), localization.close(), cache.close(), events.close()]);
    },
  };
}

export interface InstanceOptions {
  /** Kafka brokers; the shared test broker by default. */
  brokers?: string[];
  publishTimeoutMs?: number;
  /**
   * How long a gateway call may take before the delivery answers 503; the service's default (5 s)
   * unless given. Tests of the give-up path set it short; the rest keep the default, so a slow
   * machine does not turn an ordinary delivery into a retry.
   */
  gatewayTimeoutMs?: number;
  validateSignature?: boolean;
  oidcClientSecret?: string;
  /** PAYMENT_PROVIDER_API_KEY; a test-mode key by default. */
  paymentProviderApiKey?: string;
  /** More variables, or other values (e.g. PAYMENT_PROVIDER_API_URL of the events API stand-in). */
  env?: Record<string, string>;
  /** The sweeper's overlap, lease and page size; the service's defaults unless given. */
  sweeper?: WebhooksOverrides['sweeper'];
  /** Claims' lease, wait and retention; the service's defaults unless given. */
  processOnce?: WebhooksOverrides['processOnce'];
  /** The service's clock; the wall clock unless given (a runningClock: the dependencies run in real time). */
  clock?: TestClock;
}

export interface WebhooksInstance {
  baseUrl: string;
  managementUrl: string;
  registry: Registry;
  processing: ProcessingStore;
  eventLog: EventLog;
  sweeper: Sweeper;
  close(): Promise<void>;
}

/** The environment of a test instance: the dependencies of `deps`, the test keys and secrets above. */
export function testEnvironment(deps: Dependencies, options: InstanceOptions = {}): Record<string, string> {
  return {
    WEBHOOKS_API_KEY: `${API_KEY},${ROTATED_API_KEY}`,
    Webhooks__PublicBaseUrl: PUBLIC_BASE_URL,
    PAYMENT_PROVIDER_API_KEY: options.paymentProviderApiKey ?? 'sk_test_4eC39HqLyjWDarjtT1zdp7dc',
    PAYMENT_PROVIDER_API_URL: infra('STRIPE_MOCK_URL'),
    PAYMENT_PROVIDER_WEBHOOKS_SECRET: STRIPE_SECRETS.join(','),
    SMS_PROVIDER_ACCOUNT_SID: ACCOUNT_SID,
    SMS_PROVIDER_AUTH_TOKEN: TWILIO_TOKENS.join(','),
    SmsProvider__ValidateSignature: String(options.validateSignature ?? true),
    GRAPHQL_API_URL: deps.gateway.url,
    LOCALIZATION_API_URL: deps.localization.url,
    STORE_URL: deps.redisUrl,
    Cache__Url: deps.cache.address,
    MessageBroker__BrokerList: (options.brokers ?? infra('KAFKA_BROKERS').split(',')).join(','),
    MessageBroker__PaymentsTopic: deps.topics.payments,
    MessageBroker__NotificationsTopic: deps.topics.notifications,
    MessageBroker__ForeignProductsTopic: deps.topics.foreignProducts,
    AccountUrl: LINKS.account,
    BillingPortalUrl: LINKS.billingPortal,
    ClientLinkBaseUri: LINKS.clientBase,
    Oidc__ServerUrl: infra('KEYCLOAK_URL'),
    Oidc__Realm: infra('KEYCLOAK_REALM'),
    Oidc__ClientId: infra('KEYCLOAK_SERVICES_CLIENT_ID'),
    Oidc__ClientSecret: options.oidcClientSecret ?? infra('KEYCLOAK_SERVICES_CLIENT_SECRET'),
    Announcements__DraftTtlMs: String(DRAFT_TTL_MS),
    Log__Level: 'silent',
    // Tests run sweeps themselves (sweeper.sweepOnce()) unless they set an interval.
    PaymentProvider__ReconcileIntervalSeconds: '0',
    ...options.env,
  };
}

/**
 * The service from its root's wiring, wireWebhooks (its configuration loaded from an environment), served
 * as main.ts serves it (API and management listeners) on free loopback ports. The stores are the
 * test's own, on the key prefix of this test file; publishing and localization give up sooner than by default.
 */
export async function startWebhooks(deps: Dependencies, options: InstanceOptions = {}): Promise<WebhooksInstance> {
  const logger = silentLogger('webhooks');
  const registry = createRegistry('webhooks');
  const config = loadConfig(testEnvironment(deps, options));
  const now = options.clock?.now ?? Date.now;
  const stores = createStores(config, { logger, now }, { processing: deps.keyPrefix, eventLog: `${deps.keyPrefix}event-log:`, reconcile: `${deps.keyPrefix}reconcile:` });
  const webhooks = wireWebhooks(config, { logger, registry, now }, {
    stores,
    timeouts: { publishMs: options.publishTimeoutMs ?? 10_000, localizationMs: 500, ...(options.gatewayTimeoutMs === undefined ? {} : { gatewayMs: options.gatewayTimeoutMs }) },
    ...(options.sweeper === undefined ? {} : { sweeper: options.sweeper }),
    ...(options.processOnce === undefined ? {} : { processOnce: options.processOnce }),
  });
  const server: Server = createServer(requestListener(webhooks.app));
  const port = await listen(server, 0, '127.0.0.1');
  const management: ManagementServer = await startManagementServer({ port: 0, host: '127.0.0.1', registry, readiness: webhooks.readiness, logger });
  // As a kubelet's readiness gate would: the store's Redis connection refuses commands until it is
  // open (no offline queue), and on a busy machine it opens after the first requests of a test.
  await eventually(() => stores.processing.check().then(() => true, () => false), 10_000, 'the webhooks store connected');
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    managementUrl: `http://127.0.0.1:${management.port}`,
    registry,
    processing: webhooks.processing,
    eventLog: webhooks.eventLog,
    sweeper: webhooks.sweeper,
    close: async () => {
      await closeGracefully(server, 1000);
      await management.close();
      await webhooks.close();
      await stores.processing.close();
    },
  };
}

export interface Answer {
  status: number;
  headers: Headers;
  text: string;
  json: Record<string, unknown> | undefined;
}

/**
 * A request to the service whose answer is checked against openapi.yaml before it is returned
 * (by default only POSTs: the webhook routes document nothing else).
 */
export async function call(baseUrl: string, path: string, init: RequestInit & { query?: string }, checkContract = init.method === 'POST'): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}${init.query ?? ''}`, { ...init, signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  const answer: Answer = {
    status: response.status,
    headers: response.headers,
    text,
    json: response.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
  if (checkContract) assertDocumented(init.method ?? 'GET', path, answer);
  return answer;
}

export interface StripeDelivery {
  /** The `code` query parameter; API_KEY by default, null for none. */
  code?: string | null;
  secret?: string;
  /** Signing time in Unix seconds; now by default. */
  timestamp?: number;
  /** A `Stripe-Signature` header of the test's own (null: none at all). */
  signature?: string | null;
  contentType?: string;
}

const codeQuery = (code: string | null | undefined): string => (code === null ? '' : `?code=${encodeURIComponent(code ?? API_KEY)}`);

/** POSTs a payment provider event, signed as Stripe signs it unless the test says otherwise. */
export function postStripeEvent(baseUrl: string, event: Record<string, unknown> | string, delivery: StripeDelivery = {}): Promise<Answer> {
  const payload = typeof event === 'string' ? event : JSON.stringify(event, null, 2);
  const signature = delivery.signature === undefined ? signStripe(payload, delivery.secret ?? STRIPE_SECRETS[0], delivery.timestamp) : delivery.signature;
  const headers: Record<string, string> = { 'content-type': delivery.contentType ?? 'application/json; charset=utf-8', 'user-agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)' };
  if (signature !== null) headers['stripe-signature'] = signature;
  return call(baseUrl, PAYMENT_WEBHOOK_PATH, { method: 'POST', headers, body: payload, query: codeQuery(delivery.code) });
}

export interface SmsDelivery {
  code?: string | null;
  /** Auth token to sign with; the first configured one by default. */
  token?: string;
  /** An `X-Twilio-Signature` of the test's own (null: none at all). */
  signature?: string | null;
  /** The path called (SMS_WEBHOOK_PATH by default): Twilio calls the URL configured in its console, exactly. */
  path?: string;
  /** The URL signed: the public URL of the path called by default, as Twilio signs it. */
  signedUrl?: string;
}

/** The form Twilio posts for an incoming SMS. */
export function smsForm(from: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    ToCountry: 'US',
    SmsMessageSid: `SM${randomUUID().replace(/-/g, '')}`,
    NumMedia: '0',
    From: from,
    To: '+15559990000',
    Body: body,
    AccountSid: ACCOUNT_SID,
    MessageSid: `SM${randomUUID().replace(/-/g, '')}`,
    NumSegments: '1',
    ApiVersion: '2010-04-01',
    ...extra,
  };
}

/** POSTs an incoming SMS, signed with the Twilio library over the public URL unless the test says otherwise. */
export function postSms(baseUrl: string, params: Record<string, string>, delivery: SmsDelivery = {}): Promise<Answer> {
  const query = codeQuery(delivery.code);
  const path = delivery.path ?? SMS_WEBHOOK_PATH;
  const signedUrl = delivery.signedUrl ?? `${PUBLIC_BASE_URL}${path}${query}`;
  const signature = delivery.signature === undefined ? twilio.getExpectedTwilioSignature(delivery.token ?? TWILIO_TOKENS[0], signedUrl, params) : delivery.signature;
  const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'TwilioProxy/1.1' };
  if (signature !== null) headers['x-twilio-signature'] = signature;
  return call(baseUrl, path, { method: 'POST', headers, body: new URLSearchParams(params).toString(), query });
}

/** The text of the reply SMS in a TwiML answer (undefined for an empty `<Response/>`). */
export function replyText(answer: Answer): string | undefined {
  const match = /<Message>([\s\S]*)<\/Message>/.exec(answer.text);
  return match?.[1]?.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

/** The value of a counter (summed over series matching `labels`) in the registry. */
export async function counterValue(registry: Registry, name: string, labels: Record<string, string> = {}): Promise<number> {
  const metric = await registry.getSingleMetric(name)?.get();
  return (metric?.values ?? [])
    .filter((value) => Object.entries(labels).every(([key, expected]) => String((value.labels as Record<string, unknown>)[key]) === expected))
    .reduce((sum, value) => sum + value.value, 0);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
