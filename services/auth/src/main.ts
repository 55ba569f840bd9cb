import { bootService, closeGracefully, listen, onShutdown, startManagementServer } from '@sp/platform';
import { loadConfig } from './config.js';
import { createAuth } from './auth.js';
import { createAuthServer } from './server.js';
import { loadTlsCredentials } from './tls.js';

const { config, logger, registry } = bootService('auth', loadConfig);
for (const warning of config.warnings) logger.warn(warning);
if (config.allowedRedirects.entries.length === 0) logger.warn('Auth__AllowedRedirectUris is empty: every GET /login is refused with 400');

const auth = createAuth(config, { logger, registry });
const server = createAuthServer(auth.app, await loadTlsCredentials(config, logger));
const port = await listen(server, config.port, config.host);
const management = await startManagementServer({ port: config.managementPort, registry, readiness: auth.readiness, logger });
logger.info({ port, managementPort: management.port, environment: config.environment, publicBaseUrl: config.publicBaseUrl }, 'auth service listening');

onShutdown(
  [
    { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
    { name: 'https', run: () => closeGracefully(server, Math.max(config.shutdownGraceMs - 1000, 0)) },
    { name: 'adapters', run: () => auth.close() },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
