import { createServer } from 'node:http';
import { bootService, requestListener, serveHttp } from '@sp/platform';
import { loadConfig } from './config.js';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './app.js';
import { createSchemaChecker } from './schema-checker.js';

const { config, logger, registry } = bootService('graph-registry', loadConfig);

const store = createGraphStore(config.store, logger);
const schemaChecker = createSchemaChecker(config.schemaChecker);
const app = createGraphRegistryApp({ store, schemaChecker, apiKeys: config.apiKeys, logger, registry });
const ports = await serveHttp({
  server: createServer(requestListener(app)),
  config,
  registry,
  readiness: storeReadiness(store),
  logger,
  closeReserveMs: 1000,
  close: async () => {
    await schemaChecker.close();
    await store.close();
  },
});
logger.info({ ...ports, store: store.name, apiKeys: config.apiKeys.length }, 'graph registry listening');
