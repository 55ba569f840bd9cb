import cluster from 'node:cluster';
import { bootService, serveHttp } from '@sp/http';
import { loadConfig } from './config.js';
import { createAuth } from './auth.js';
import { createAuthServer } from './server.js';
import { loadTlsCredentials } from './tls.js';
import { superviseWorkers } from './workers.js';

// Load the configuration, create the service, serve it: docs/development.md, "One shape for every
// service". With Auth__Workers > 1 the primary only supervises; each worker creates and serves.
const { config, logger, registry } = bootService('auth', loadConfig);
if (config.workers > 1 && cluster.isPrimary) {
  superviseWorkers(config.workers, logger);
} else {
  const auth = createAuth(config, { logger, registry });
  const ports = await serveHttp({
    server: createAuthServer(auth.listener, await loadTlsCredentials(config, logger)),
    config,
    registry,
    readiness: auth.readiness,
    logger,
    closeReserveMs: 1000,
    close: () => auth.close(),
  });
  logger.info({ ...ports, environment: config.environment, publicBaseUrl: config.publicBaseUrl }, 'auth service listening');
}
