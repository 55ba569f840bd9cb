import { createServer } from 'node:http';
import { bootService, closeGracefully, listen, onShutdown, requestListener, startManagementServer } from '@sp/platform';
import { loadConfig } from './config.js';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './app.js';

const { config, logger, registry } = bootService('graph-registry', loadConfig);

const store = createGraphStore(config.store, logger);
const app = createGraphRegistryApp({ store, apiKeys: config.apiKeys, logger, registry });
const server = createServer(requestListener(app));
const port = await listen(server, config.port, config.host);
const management = await startManagementServer({ port: config.managementPort, registry, readiness: storeReadiness(store), logger });
logger.info({ port, managementPort: management.port, store: store.name, apiKeys: config.apiKeys.length }, 'graph registry listening');

onShutdown(
  [
    { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
    { name: 'http', run: () => closeGracefully(server, Math.max(config.shutdownGraceMs - 1000, 0)) },
    { name: 'store', run: () => store.close() },
    { name: 'management', run: () => management.close() },
  ],
  { logger, gracePeriodMs: config.shutdownGraceMs },
);
