import type Koa from 'koa';
import type { Logger, Registry } from '@sp/observability';
import type { ReadinessCheck } from '@sp/http';
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
  /** The HTTP app, to be served (main.ts: the platform's serveHttp). */
  app: Koa;
  store: GraphStore;
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  /** Stops the schema workers and closes the adapters it created (shutdown). */
  close(): Promise<void>;
}

/** What the root reads of the configuration: the listeners are serveHttp's. */
export type GraphRegistrySettings = Pick<GraphRegistryConfig, 'store' | 'apiKeys' | 'schemaChecker' | 'schemaPublishing' | 'brokers'> & Partial<Pick<GraphRegistryConfig, 'federation' | 'cdn'>>;

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
 * and the tests both build the service through it.
 */
export function createGraphRegistry(config: GraphRegistrySettings, runtime: GraphRegistryRuntime, overrides: GraphRegistryOverrides = {}): GraphRegistry {
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
