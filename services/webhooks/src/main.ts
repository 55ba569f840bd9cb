import { createServer } from 'node:http';
import { createCacheClient, stringSerializer } from '@sp/cache-client';
import { bootService, closeGracefully, createKafkaPublisher, listen, onShutdown, requestListener, startManagementServer } from '@sp/platform';
import { createDedupStore, createWebhooksApp, webhooksReadiness } from './app.js';
import { loadConfig } from './config.js';
import { createGraphqlGateway } from './graphql-gateway.js';
import { createKeycloakTokenProvider } from './keycloak-token-provider.js';
import { createLocalizationClient } from './localization-client.js';
import { createStripePaymentProvider } from './stripe-payment-provider.js';
import { createTwilioSmsProvider } from './twilio-sms-provider.js';

const { config, logger, registry } = bootService('webhooks', loadConfig);

if (!config.smsProvider.validateSignature) logger.warn('SmsProvider__ValidateSignature is false: SMS webhooks are not authenticated by signature; never do this in production');

const dedup = createDedupStore(config.store, logger);
const cache = createCacheClient<string>({ address: config.cacheAddress }, stringSerializer);
const publisher = createKafkaPublisher({ brokers: config.brokers, clientId: 'webhooks', source: '/subscription-platform/webhooks', logger, registry });
const tokens = createKeycloakTokenProvider(config.oidc);
const gateway = createGraphqlGateway({ url: config.graphqlUrl, tokens });
const deps = {
  apiKeys: config.apiKeys,
  paymentProvider: createStripePaymentProvider(config.paymentProvider),
  smsProvider: createTwilioSmsProvider(config.smsProvider.authTokens),
  gateway,
  dedup,
  cache,
  localization: createLocalizationClient({ baseUrl: config.localizationUrl }),
  publisher,
  topics: config.topics,
  links: config.links,
  sms: {
    accountSid: config.smsProvider.accountSid,
    validateSignature: config.smsProvider.validateSignature,
    publicBaseUrl: config.publicBaseUrl,
    draftTtlMs: config.announcementTtlMs,
  },
  logger,
  registry,
};
const app = createWebhooksApp(deps);
const server = createServer(requestListener(app));
const port = await listen(server, config.port, config.host);
const management = await startManagementServer({ port: config.managementPort, registry, readiness: webhooksReadiness(deps), logger });
logger.info({ port, managementPort: management.port, store: dedup.name, topics: config.topics }, 'webhooks service listening');

onShutdown(
  [
    { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
    { name: 'http', run: () => closeGracefully(server, Math.max(config.shutdownGraceMs - 2000, 0)) },
    { name: 'broker', run: () => publisher.close() },
    { name: 'store', run: () => dedup.close() },
    { name: 'cache', run: () => Promise.resolve(cache.close()) },
    { name: 'gateway', run: () => Promise.resolve(gateway.close()) },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
