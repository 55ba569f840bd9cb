import { createServer } from 'node:http';
import { bootService, closeGracefully, listen, onShutdown, requestListener, startManagementServer } from '@sp/platform';
import { loadConfig } from './config.js';
import { createWebhooks } from './webhooks.js';

const { config, logger, registry } = bootService('webhooks', loadConfig);

if (!config.smsProvider.validateSignature) logger.warn('SmsProvider__ValidateSignature is false: SMS webhooks are not authenticated by signature; never do this in production');

const webhooks = createWebhooks(config, { logger, registry });
const server = createServer(requestListener(webhooks.app));
const port = await listen(server, config.port, config.host);
const management = await startManagementServer({ port: config.managementPort, registry, readiness: webhooks.readiness, logger });
logger.info({ port, managementPort: management.port, store: webhooks.dedup.name, topics: config.topics }, 'webhooks service listening');

onShutdown(
  [
    { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
    { name: 'http', run: () => closeGracefully(server, Math.max(config.shutdownGraceMs - 2000, 0)) },
    { name: 'adapters', run: () => webhooks.close() },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
