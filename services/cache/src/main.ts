import { bootService, serveService } from '@sp/http';
import { createCache } from './cache.js';
import { loadConfig } from './config.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every service".
const { config, logger, registry } = bootService('cache', loadConfig);
const cache = createCache(config, { logger, registry });
const { port, managementPort } = await serveService({
  api: cache.api,
  config,
  registry,
  readiness: cache.readiness,
  logger,
  // Calls take well under a millisecond, but clients' idle connections hold a graceful gRPC
  // shutdown open until it is cut: half the grace period for the server leaves the other half
  // to close the store and the management listener.
  closeReserveMs: config.shutdownGraceMs / 2,
  close: () => cache.close(),
});
logger.info({ port, managementPort, backend: config.backend.kind }, 'cache service listening');
