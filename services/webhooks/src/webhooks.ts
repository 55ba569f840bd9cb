import type Koa from 'koa';
import { createCacheClient, stringSerializer } from '@sp/cache-client';
import type { Logger, Registry } from '@sp/observability';
import { createServer } from 'node:http';
import { httpApi, requestListener, type ReadinessCheck, type ServedApi } from '@sp/http';
import { createOidcTokenClient, keycloakIssuer } from '@sp/identity';
import { createKafkaPublisher, type EventPublisher } from '@sp/messaging';
import { createWebhooksApp, webhooksReadiness, type WebhooksAppDeps } from './app.js';
import type { WebhooksConfig } from './config.js';
import type { ProcessingStore } from './events/processing-store.js';
import { defaultProcessOnceOptions, type ProcessOnceOptions } from './events/process-once.js';
import type { EventLog } from './events/event-log.js';
import type { GatewayPort } from './gateway/gateway-port.js';
import { createGraphqlGatewayClient } from './gateway/graphql-gateway-client.js';
import { createLocalizationClient } from './sms/localization-client.js';
import { createStripePaymentProvider } from './payments/stripe-payment-provider.js';
import { createSweeper, defaultSweeperOptions, type Sweeper, type SweeperOptions } from './payments/reconcile-sweeper.js';
import { createStores, type Stores } from './stores.js';
import { createTwilioSmsProvider } from './sms/twilio-sms-provider.js';
import { createWebhooksMetrics, registerDeadLetterGauge } from './webhooks-metrics.js';

export interface WebhooksRuntime {
  logger: Logger;
  registry: Registry;
  /**
   * The clock, Unix ms, of everything the service dates or times itself (the event log, a sweep's
   * start, claims' leases, a signature's age, token expiry, when a command arrived): main.ts gives
   * Date.now, a test its own (test/support/test-clock.ts).
   */
  now: () => number;
}

/**
 * What a test brings itself instead of what the configuration names: adapters (the test closes
 * those it brings), and the bounds of the adapters the root builds where a test needs them shorter.
 */
export interface WebhooksOverrides {
  /** The stores, e.g. on key prefixes of the test's own (`createStores`). */
  stores?: Stores;
  publisher?: EventPublisher;
  gateway?: GatewayPort;
  /** Upper bounds of outbound calls; the adapters' defaults unless given. */
  timeouts?: { publishMs?: number; gatewayMs?: number; localizationMs?: number };
  /** The sweeper's settings besides its interval (from the configuration); the defaults unless given. */
  sweeper?: Partial<Omit<SweeperOptions, 'intervalMs'>>;
  /** Claims of events and objects: lease, wait for a concurrent delivery, retention; the defaults unless given. */
  processOnce?: ProcessOnceOptions;
}

export interface Webhooks {
  /** What main.ts serves (serveService): the HTTP app on `port`. */
  api: ServedApi<number>;
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  /** Stops the sweeper, flushes the broker and closes every outbound connection it opened, in order (shutdown). */
  close(): Promise<void>;
}

/** The service and the parts the root wired it from, for tests that drive a part below HTTP. */
export interface WebhooksParts extends Webhooks {
  /** The HTTP app, for tests that serve it themselves. */
  app: Koa;
  processing: ProcessingStore;
  eventLog: EventLog;
  /** The reconciliation sweeper, already started on the configured interval (`sweepOnce()` for a sweep now). */
  sweeper: Sweeper;
}

/** What the root reads of the configuration: the management listener, the log level and the grace period are serveService's and bootService's. */
export type WebhooksSettings = Omit<WebhooksConfig, 'managementPort' | 'logLevel' | 'shutdownGraceMs'>;

/** The Kafka producer of the service's three topics. */
function createPublisher(config: WebhooksSettings, runtime: WebhooksRuntime, publishMs: number | undefined): EventPublisher {
  return createKafkaPublisher({
    brokers: config.brokers,
    clientId: 'webhooks',
    source: '/subscription-platform/webhooks',
    logger: runtime.logger,
    registry: runtime.registry,
    ...(publishMs === undefined ? {} : { publishTimeoutMs: publishMs }),
    events: [
      { topic: config.topics.payments, type: 'PaymentConfirmedEvent' },
      { topic: config.topics.notifications, type: 'SendSmsNotificationEvent' },
      { topic: config.topics.foreignProducts, type: 'ProviderProductCreatedEvent' },
    ],
  });
}

/** The GraphQL gateway's client, each call with a Keycloak client-credentials token. */
function createGateway(config: WebhooksSettings, now: () => number, timeoutMs: number | undefined): GatewayPort {
  const issuer = keycloakIssuer(config.oidc.serverUrl, config.oidc.realm);
  const tokens = createOidcTokenClient({
    issuer,
    grant: { type: 'client_credentials', clientId: config.oidc.clientId, clientSecret: config.oidc.clientSecret },
    // openid-client refuses plain-http issuers; the configuration accepts an http Keycloak (a cluster-internal URL).
    allowInsecureHttp: issuer.startsWith('http:'),
    now,
  });
  return createGraphqlGatewayClient({ url: config.graphqlUrl, tokens, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
}

/** The adapters every handler may need, beside the stores, the publisher and the gateway. */
function createProviders(config: WebhooksSettings, now: () => number, localizationMs: number | undefined): Pick<WebhooksAppDeps, 'paymentProvider' | 'smsProvider' | 'cache' | 'localization'> {
  return {
    paymentProvider: createStripePaymentProvider({ ...config.paymentProvider, now }),
    smsProvider: createTwilioSmsProvider(config.smsProvider.authTokens),
    cache: createCacheClient<string>({ address: config.cacheAddress }, stringSerializer),
    localization: createLocalizationClient({ baseUrl: config.localizationUrl, ...(localizationMs === undefined ? {} : { timeoutMs: localizationMs }) }),
  };
}

/**
 * The webhooks service's composition root: the adapters the configuration names (Redis or memory
 * stores, the cache service, Kafka, Keycloak client-credentials tokens for the GraphQL gateway,
 * Stripe, Twilio, the localization service) or a test's overrides, the HTTP app on them, and the
 * reconciliation sweeper, started. main.ts builds the service through it.
 */
export function createWebhooks(config: WebhooksSettings, runtime: WebhooksRuntime, overrides: WebhooksOverrides = {}): Webhooks {
  const parts = wireWebhooks(config, runtime, overrides);
  return { api: parts.api, readiness: parts.readiness, close: () => parts.close() };
}

/** What createWebhooks does, keeping the parts: the tests build the service through it. */
export function wireWebhooks(config: WebhooksSettings, runtime: WebhooksRuntime, overrides: WebhooksOverrides = {}): WebhooksParts {
  const { logger, registry, now } = runtime;
  const { timeouts = {} } = overrides;
  if (!config.smsProvider.validateSignature) logger.warn('SmsProvider__ValidateSignature is false: SMS webhooks are not authenticated by signature; never do this in production');
  const { processing, eventLog, reconcile } = overrides.stores ?? createStores(config, runtime);
  registerDeadLetterGauge(registry, () => eventLog.deadCount());
  const publisher = overrides.publisher ?? createPublisher(config, runtime, timeouts.publishMs);
  const gateway = overrides.gateway ?? createGateway(config, now, timeouts.gatewayMs);
  const providers = createProviders(config, now, timeouts.localizationMs);
  const deps: WebhooksAppDeps = {
    ...providers,
    apiKeys: config.apiKeys,
    livemode: config.paymentProvider.livemode,
    gateway,
    processing,
    eventLog,
    adminApiKeys: config.adminApiKeys,
    metrics: createWebhooksMetrics(registry),
    publisher,
    topics: config.topics,
    links: config.links,
    sms: {
      accountSid: config.smsProvider.accountSid,
      validateSignature: config.smsProvider.validateSignature,
      publicBaseUrl: config.publicBaseUrl,
      draftTtlMs: config.announcementTtlMs,
      messageRetentionMs: config.smsProvider.messageRetentionMs,
    },
    logger,
    registry,
    processOnceOptions: { ...(overrides.processOnce ?? defaultProcessOnceOptions), now },
    now,
  };
  const sweeper = createSweeper({ ...deps, state: reconcile }, { ...defaultSweeperOptions, ...overrides.sweeper, intervalMs: config.reconcileIntervalMs });
  // Sweeps run from the start (the first at once) until close(), the shutdown's adapters step: after the API drained, before the producer is flushed.
  sweeper.start();
  const app = createWebhooksApp(deps);
  return {
    api: httpApi(() => createServer(requestListener(app)), config),
    app,
    readiness: webhooksReadiness(deps),
    processing,
    eventLog,
    sweeper,
    async close() {
      await sweeper.stop();
      if (overrides.publisher === undefined) await publisher.close().catch((err: unknown) => logger.warn({ err }, 'closing the Kafka publisher failed'));
      if (overrides.stores === undefined) await processing.close();
      providers.cache.close();
      if (overrides.gateway === undefined) gateway.close();
    },
  };
}
