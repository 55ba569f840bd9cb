import { createServer } from 'node:http';
import {
  closeGracefully,
  createLogger,
  createRegistry,
  installProcessHandlers,
  listen,
  loadConfigOrExit,
  onShutdown,
  startManagementServer,
} from '@sp/platform';
import { loadConfig } from './config.js';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './app.js';

const config = loadConfigOrExit(() => loadConfig(), 'graph-registry');
const logger = createLogger({ service: 'graph-registry', level: config.logLevel });
installProcessHandlers(logger);
const registry = createRegistry('graph-registry');

const store = createGraphStore(config.store, logger);
const app = createGraphRegistryApp({ store, apiKeys: config.apiKeys, logger, registry });
const handle = app.callback();
const server = createServer((req, res) => void handle(req, res));
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
