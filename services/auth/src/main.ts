import cluster from 'node:cluster';
import { bootService, serveHttp } from '@sp/platform';
import { loadConfig } from './config.js';
import { createAuth } from './auth.js';
import { createAuthServer } from './server.js';
import { loadTlsCredentials } from './tls.js';
import { superviseWorkers } from './workers.js';

const { config, logger, registry } = bootService('auth', loadConfig);
if (config.workers > 1 && cluster.isPrimary) {
  superviseWorkers(config.workers, logger);
} else {
  await serve();
}

/** The service itself: the only process, or one of the workers. */
async function serve(): Promise<void> {
  for (const warning of config.warnings) logger.warn(warning);
  if (config.allowedRedirects.entries.length === 0) logger.warn('Auth__AllowedRedirectUris is empty: every GET /login is refused with 400');

  const auth = createAuth(config, { logger, registry });
  const server = createAuthServer(auth.app, await loadTlsCredentials(config, logger));
  const ports = await serveHttp({
    server,
    config,
    registry,
    readiness: auth.readiness,
    logger,
    closeReserveMs: 1000,
    close: () => auth.close(),
  });
  logger.info({ ...ports, environment: config.environment, publicBaseUrl: config.publicBaseUrl }, 'auth service listening');
}
