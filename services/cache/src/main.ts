import { bootService, onShutdown, startManagementServer } from '@sp/platform';
import { loadConfig } from './config.js';
import { createCacheApp } from './app.js';

const { config, logger, registry } = bootService('cache', loadConfig);

const app = createCacheApp(config, { registry, logger });
if (config.backend.kind === 'memory') {
  logger.info({ capacity: config.backend.capacity }, 'memory backend: entries live in this process only; use redis for more than one replica');
}
const port = await app.grpc.listen(config.port, config.host);
await app.refreshHealth();
const healthTimer = setInterval(() => void app.refreshHealth(), 5000);
healthTimer.unref();
const management = await startManagementServer({ port: config.managementPort, registry, readiness: app.readiness, logger });
logger.info({ port, managementPort: management.port, backend: config.backend.kind }, 'cache service listening');

onShutdown(
  [
    {
      name: 'readiness',
      run: () => {
        // Stop the health refresh first: run after the server closed, it would fail the shutdown.
        clearInterval(healthTimer);
        app.grpc.setServing(false);
        management.markShuttingDown();
        return Promise.resolve();
      },
    },
    // Calls take well under a millisecond, but clients' idle connections hold a graceful gRPC
    // shutdown open until it is cut: half the grace period leaves the rest time to finish.
    { name: 'grpc', run: () => app.grpc.close(config.shutdownGraceMs / 2) },
    { name: 'store', run: () => app.store.close() },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
