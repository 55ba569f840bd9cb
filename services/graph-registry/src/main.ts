import { createServer } from 'node:http';
import { bootService, createKafkaPublisher, requestListener, serveHttp } from '@sp/platform';
import { loadConfig } from './config.js';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './app.js';
import { createSchemaChecker } from './schema-checker.js';

const { config, logger, registry } = bootService('graph-registry', loadConfig);

const store = createGraphStore(config.store, logger);
const schemaChecker = createSchemaChecker(config.schemaChecker);
// The broker is optional: lookups never need it, so it is not part of readiness either.
const events =
  config.brokers === undefined ? undefined : createKafkaPublisher({ brokers: config.brokers, clientId: 'graph-registry', source: '/subscription-platform/graph-registry', logger, registry });
if (events === undefined) logger.warn('MessageBroker__BrokerList is not set: schema versions are published without SchemaPublishedEvent');
const app = createGraphRegistryApp({
  store,
  schemaChecker,
  schemaPublishing: config.schemaPublishing,
  ...(events === undefined ? {} : { events }),
  apiKeys: config.apiKeys,
  logger,
  registry,
});
const ports = await serveHttp({
  server: createServer(requestListener(app)),
  config,
  registry,
  readiness: storeReadiness(store),
  logger,
  closeReserveMs: 1000,
  close: async () => {
    await schemaChecker.close();
    await events?.close();
    await store.close();
  },
});
logger.info({ ...ports, store: store.name, apiKeys: config.apiKeys.length, schemaPolicy: config.schemaPublishing.policy }, 'graph registry listening');
