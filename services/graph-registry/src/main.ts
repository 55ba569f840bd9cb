import { createServer } from 'node:http';
import { bootService, requestListener, serveHttp } from '@sp/http';
import { loadConfig } from './config.js';
import { createGraphRegistry } from './graph-registry.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every service".
const { config, logger, registry } = bootService('graph-registry', loadConfig);
const graphRegistry = createGraphRegistry(config, { logger, registry });
const ports = await serveHttp({
  server: createServer(requestListener(graphRegistry.app)),
  config,
  registry,
  readiness: graphRegistry.readiness,
  logger,
  closeReserveMs: 1000,
  close: () => graphRegistry.close(),
});
logger.info({ ...ports, store: graphRegistry.store.name, apiKeys: config.apiKeys.length, schemaPolicy: config.schemaPublishing.policy }, 'graph registry listening');
