import type Koa from 'koa';
import type { Logger, Registry } from '@sp/observability';
import { createServer } from 'node:http';
import { httpApi, requestListener, type ReadinessCheck, type ServedApi } from '@sp/http';
import { createKafkaPublisher, type EventPublisher } from '@sp/messaging';
import { createGraphRegistryApp, createGraphStore, storeReadiness } from './http/app.js';
import type { GraphRegistryConfig } from './config.js';
import type { GraphStore } from './graphs/graph-store.js';
import { subgraphAnnouncements } from './federation/subgraph-events.js';
import { createSchemaAnnouncer, versionAnnouncements, type SchemaAnnouncer } from './schemas/schema-announcer.js';
import { createSchemaChecker } from './schemas/schema-checker.js';

export interface GraphRegistryRuntime {
  logger: Logger;
  registry: Registry;
}

/** Adapters a test brings itself instead of those the configuration names; the test closes them. */
export interface GraphRegistryOverrides {
  store?: GraphStore;
  events?: EventPublisher;
}

export interface GraphRegistry {
  /** What main.ts serves (serveService): the HTTP app on `port`. */
  api: ServedApi<number>;
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  /** Stops the schema workers and closes the adapters it created (shutdown). */
  close(): Promise<void>;
}

/** The service and the parts the root wired it from, for tests that drive a part below HTTP. */
export interface GraphRegistryParts extends GraphRegistry {
  /** The HTTP app, for tests that serve it themselves. */
  app: Koa;
  store: GraphStore;
}

/** What the root reads of the configuration: the management listener and the grace period are serveService's. */
export type GraphRegistrySettings = Pick<GraphRegistryConfig, 'port' | 'host' | 'store' | 'apiKeys' | 'schemaChecker' | 'schemaPublishing' | 'brokers'> & Partial<Pick<GraphRegistryConfig, 'federation' | 'cdn'>>;

/** The SchemaPublishedEvent announcers, one mechanism for both logs: the registry's own schema versions and the supergraph versions (subgraph publishes). */
function createAnnouncers(store: GraphStore, events: EventPublisher | undefined, topic: string, logger: Logger): { schema: SchemaAnnouncer; subgraphs: SchemaAnnouncer } | undefined {
  if (events === undefined) {
    logger.warn('MessageBroker__BrokerList is not set: schema versions are published without SchemaPublishedEvent');
    return undefined;
  }
  return {
    schema: createSchemaAnnouncer({ log: store.versions, pending: versionAnnouncements(store.versions), events, logger }, { topic }),
    subgraphs: createSchemaAnnouncer({ log: store.federation, pending: subgraphAnnouncements(store.federation, logger), events, logger }, { topic }),
  };
}

/**
 * The graph registry's composition root: the store and the Kafka publisher the configuration
 * names (or a test's overrides), the schema checker's workers, and the HTTP app on them. main.ts
 * builds the service through it.
 */
export function createGraphRegistry(config: GraphRegistrySettings, runtime: GraphRegistryRuntime, overrides: GraphRegistryOverrides = {}): GraphRegistry {
  const parts = wireGraphRegistry(config, runtime, overrides);
  return { api: parts.api, readiness: parts.readiness, close: () => parts.close() };
}

/** What createGraphRegistry does, keeping the parts: the tests build the service through it. */
export function wireGraphRegistry(config: GraphRegistrySettings, runtime: GraphRegistryRuntime, overrides: GraphRegistryOverrides = {}): GraphRegistryParts {
  const { logger, registry } = runtime;
  const store = overrides.store ?? createGraphStore(config.store, logger);
  const schemaChecker = createSchemaChecker(config.schemaChecker);
  // The broker is optional: lookups never need it, so it is not part of readiness either.
  const ownEvents =
    overrides.events !== undefined || config.brokers === undefined
      ? undefined
      : createKafkaPublisher({ brokers: config.brokers, clientId: 'graph-registry', source: '/subscription-platform/graph-registry', logger, registry });
  const events = overrides.events ?? ownEvents;
  const announcers = createAnnouncers(store, events, config.schemaPublishing.topic, logger);
  const app = createGraphRegistryApp({
    store,
    schemaChecker,
    schemaPublishing: config.schemaPublishing,
    ...(announcers === undefined ? {} : { announcers }),
    apiKeys: config.apiKeys,
    ...(config.federation === undefined ? {} : { federation: config.federation }),
    ...(config.cdn === undefined ? {} : { cdn: config.cdn }),
    logger,
    registry,
  });
  return {
    api: httpApi(() => createServer(requestListener(app)), config),
    app,
    store,
    readiness: storeReadiness(store),
    async close() {
      announcers?.schema.close();
      announcers?.subgraphs.close();
      await schemaChecker.close();
      await ownEvents?.close();
      if (overrides.store === undefined) await store.close();
    },
  };
}
