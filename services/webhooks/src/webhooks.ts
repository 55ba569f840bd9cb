import type Koa from 'koa';
import { createCacheClient, stringSerializer } from '@sp/cache-client';
import { createKafkaPublisher, createOidcTokenClient, keycloakIssuer, type EventPublisher, type Logger, type ReadinessCheck, type Registry } from '@sp/platform';
import { createWebhooksApp, webhooksReadiness, type WebhooksAppDeps } from './app.js';
import type { WebhooksConfig } from './config.js';
import type { ProcessingStore } from './processing-store.js';
import { STRIPE_RETRY_WINDOW_MS, type EventLog } from './event-log.js';
import { createGraphqlGatewayClient } from './graphql-gateway-client.js';
import { createLocalizationClient } from './localization-client.js';
import { createStripePaymentProvider } from './stripe-payment-provider.js';
import { createSweeper, defaultSweeperOptions, type Sweeper, type SweeperOptions } from './reconcile-sweeper.js';
import { createStores, type StorePrefixes } from './stores.js';
import { createTwilioSmsProvider } from './twilio-sms-provider.js';
import { createWebhooksMetrics, registerDeadLetterGauge } from './webhooks-metrics.js';

export interface WebhooksRuntime {
  logger: Logger;
  registry: Registry;
  /** Kafka client id. Default `webhooks`. */
  clientId?: string;
  /** Prefixes of the keys in Redis; each store's own by default. */
  keyPrefixes?: StorePrefixes;
  /** The sweeper's settings besides its interval (from the configuration); the defaults unless given. */
  sweeper?: Partial<Omit<SweeperOptions, 'intervalMs'>>;
  /** Upper bounds of outbound calls; the adapters' defaults unless given. */
  timeouts?: { publishMs?: number; gatewayMs?: number; localizationMs?: number };
}

export interface Webhooks {
  app: Koa;
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  processing: ProcessingStore;
  eventLog: EventLog;
  publisher: EventPublisher;
  /** The reconciliation sweeper; `start()` begins its schedule (main.ts calls it once listening). */
  sweeper: Sweeper;
  /** Stops the sweeper, flushes the broker and closes every outbound connection, in order. */
  close(): Promise<void>;
}

/**
 * The webhooks service's composition root: the real adapters as configured (Redis or memory
 * de-duplication, the cache service, Kafka, Keycloak client-credentials tokens for the GraphQL
 * gateway, Stripe, Twilio, the localization service) and the HTTP app on them. main.ts and the
 * tests both build the service through it.
 */
export function createWebhooks(config: WebhooksConfig, runtime: WebhooksRuntime): Webhooks {
  const { logger, registry, timeouts = {} } = runtime;
  const eventLogOptions = { ...config.eventLog, retryWindowMs: STRIPE_RETRY_WINDOW_MS };
  const { processing, eventLog, reconcile } = createStores(config.store, eventLogOptions, logger, runtime.keyPrefixes);
  const metrics = createWebhooksMetrics(registry);
  registerDeadLetterGauge(registry, () => eventLog.deadCount());
  const cache = createCacheClient<string>({ address: config.cacheAddress }, stringSerializer);
  const publisher = createKafkaPublisher({
    brokers: config.brokers,
    clientId: runtime.clientId ?? 'webhooks',
    source: '/subscription-platform/webhooks',
    logger,
    registry,
    ...(timeouts.publishMs === undefined ? {} : { publishTimeoutMs: timeouts.publishMs }),
    events: [
      { topic: config.topics.payments, type: 'PaymentConfirmedEvent' },
      { topic: config.topics.notifications, type: 'SendSmsNotificationEvent' },
      { topic: config.topics.foreignProducts, type: 'ProviderProductCreatedEvent' },
    ],
  });
  const issuer = keycloakIssuer(config.oidc.serverUrl, config.oidc.realm);
  const tokens = createOidcTokenClient({
    issuer,
    grant: { type: 'client_credentials', clientId: config.oidc.clientId, clientSecret: config.oidc.clientSecret },
    // openid-client refuses plain-http issuers; the configuration accepts an http Keycloak (a cluster-internal URL).
    allowInsecureHttp: issuer.startsWith('http:'),
  });
  const gateway = createGraphqlGatewayClient({ url: config.graphqlUrl, tokens, ...(timeouts.gatewayMs === undefined ? {} : { timeoutMs: timeouts.gatewayMs }) });
  const deps: WebhooksAppDeps = {
    apiKeys: config.apiKeys,
    paymentProvider: createStripePaymentProvider(config.paymentProvider),
    livemode: config.paymentProvider.livemode,
    smsProvider: createTwilioSmsProvider(config.smsProvider.authTokens),
    gateway,
    processing,
    eventLog,
    adminApiKeys: config.adminApiKeys,
    metrics,
    cache,
    localization: createLocalizationClient({ baseUrl: config.localizationUrl, ...(timeouts.localizationMs === undefined ? {} : { timeoutMs: timeouts.localizationMs }) }),
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
  };
  const sweeper = createSweeper({ ...deps, state: reconcile }, { ...defaultSweeperOptions, ...runtime.sweeper, intervalMs: config.reconcileIntervalMs });
  return {
    app: createWebhooksApp(deps),
    readiness: webhooksReadiness(deps),
    processing,
    eventLog,
    publisher,
    sweeper,
    async close() {
      await sweeper.stop();
      await publisher.close().catch((err: unknown) => logger.warn({ err }, 'closing the Kafka publisher failed'));
      await processing.close();
      cache.close();
      gateway.close();
    },
  };
}
