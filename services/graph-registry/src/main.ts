import { createServer } from 'node:http';
import { bootService, requestListener, serveHttp } from '@sp/platform';
import { loadConfig } from './config.js';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './app.js';

const { config, logger, registry } = bootService('graph-registry', loadConfig);

const store = createGraphStore(config.store, logger);
const app = createGraphRegistryApp({ store, apiKeys: config.apiKeys, logger, registry });
const ports = await serveHttp({
  server: createServer(requestListener(app)),
  config,
  registry,
  readiness: storeReadiness(store),
  logger,
  closeReserveMs: 1000,
  close: () => store.close(),
});
logger.info({ ...ports, store: store.name, apiKeys: config.apiKeys.length }, 'graph registry listening');
