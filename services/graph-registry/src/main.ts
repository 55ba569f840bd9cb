import { bootService, serveService } from '@sp/http';
import { loadConfig } from './config.js';
import { createGraphRegistry } from './graph-registry.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every service".
const { config, logger, registry } = bootService('graph-registry', loadConfig);
const graphRegistry = createGraphRegistry(config, { logger, registry });
const { port, managementPort } = await serveService({
  api: graphRegistry.api,
  config,
  registry,
  readiness: graphRegistry.readiness,
  logger,
  closeReserveMs: 1000,
  close: () => graphRegistry.close(),
});
logger.info({ port, managementPort, store: config.store.kind, apiKeys: config.apiKeys.length, schemaPolicy: config.schemaPublishing.policy }, 'graph registry listening');
