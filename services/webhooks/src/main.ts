import { bootService, serveService } from '@sp/http';
import { loadConfig } from './config.js';
import { createWebhooks } from './webhooks.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every service".
const { config, logger, registry } = bootService('webhooks', loadConfig);
const webhooks = createWebhooks(config, { logger, registry, now: Date.now });
const { port, managementPort } = await serveService({
  api: webhooks.api,
  config,
  registry,
  readiness: webhooks.readiness,
  logger,
  // A webhook may wait on the gateway and Kafka: more of the grace period stays for the adapters.
  closeReserveMs: 2000,
  close: () => webhooks.close(),
});
logger.info({ port, managementPort, store: config.store.kind, topics: config.topics, reconcileIntervalMs: config.reconcileIntervalMs, adminApi: config.adminApiKeys !== undefined }, 'webhooks service listening');
