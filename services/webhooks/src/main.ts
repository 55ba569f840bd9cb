import { createServer } from 'node:http';
import { bootService, requestListener, serveHttp } from '@sp/platform';
import { loadConfig } from './config.js';
import { createWebhooks } from './webhooks.js';

const { config, logger, registry } = bootService('webhooks', loadConfig);

if (!config.smsProvider.validateSignature) logger.warn('SmsProvider__ValidateSignature is false: SMS webhooks are not authenticated by signature; never do this in production');

const webhooks = createWebhooks(config, { logger, registry });
const server = createServer(requestListener(webhooks.app));
const ports = await serveHttp({
  server,
  config,
  registry,
  readiness: webhooks.readiness,
  logger,
  // A webhook may wait on the gateway and Kafka: more of the grace period stays for the adapters.
  closeReserveMs: 2000,
  close: () => webhooks.close(),
});
logger.info({ ...ports, store: webhooks.processing.name, topics: config.topics, reconcileIntervalMs: config.reconcileIntervalMs, adminApi: config.adminApiKeys !== undefined }, 'webhooks service listening');
// Stopped by webhooks.close(), the shutdown's adapters step: after the API drained, before the producer is flushed.
webhooks.sweeper.start();
