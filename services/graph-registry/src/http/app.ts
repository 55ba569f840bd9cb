import type Koa from 'koa';
import { parseRedisUrl, notFound, type StoreConfig } from '@sp/core';
import type { Logger, Registry } from '@sp/observability';
import { createHttpApp, type ReadinessCheck } from '@sp/http';
import { requireApiKey } from '@sp/identity';
import { connectRedis } from '@sp/storage';
import type { GraphStore } from '../graphs/graph-store.js';
import { createMemoryGraphStore } from '../graphs/memory-graph-store.js';
import { createRedisGraphStore } from '../graphs/redis-graph-store.js';
import { registerGraphMetrics } from './registry-metrics.js';
import { createRouter } from './router.js';
import { createArtifactHandler, type CdnSettings } from '../cdn/artifact-handler.js';
import { createSupergraphComposer, DEFAULT_FEDERATION, type FederationSettings } from '../federation/supergraph-composer.js';
import type { SchemaAnnouncer } from '../schemas/schema-announcer.js';
import { createLazySchemaChecker, type SchemaChecker } from '../schemas/schema-checker.js';
import { createSchemaPublisher, DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from '../schemas/schema-publisher.js';
import { ownSchemaSubject } from '../schemas/schema-subject.js';

export interface GraphRegistryDeps {
  store: GraphStore;
  /** Checks uploaded schemas off the event loop; by default a checker with the default limits whose worker starts with the first schema. */
  schemaChecker?: SchemaChecker;
  /** Policy, retention and event topic of schema versions; DEFAULT_SCHEMA_PUBLISHING by default. */
  schemaPublishing?: SchemaPublishing;
  /**
   * Send SchemaPublishedEvent, in order: of the registry's own schema versions, and of subgraph
   * publishes (in supergraph version order); without them, versions are published without events.
   */
  announcers?: { schema: SchemaAnnouncer; subgraphs: SchemaAnnouncer };
  /** Retention and bounds of subgraph schemas and supergraph versions; DEFAULT_FEDERATION by default. */
  federation?: FederationSettings;
  /** The CDN's read-only keys and target; without them every CDN key is refused. */
  cdn?: CdnSettings;
  /** Accepted values of X-Api-Key. */
  apiKeys: readonly string[];
  logger: Logger;
  registry: Registry;
}

/** The store chosen by configuration; the memory store warns, since it is for local runs only. */
export function createGraphStore(config: StoreConfig, logger: Logger): GraphStore {
  if (config.kind === 'redis') return createRedisGraphStore(connectRedis(parseRedisUrl(config.url)), logger);
  logger.warn('STORE_URL is memory://: graphs live in this process only and are lost on restart; use redis:// outside local runs');
  return createMemoryGraphStore();
}

/** What /readyz checks: the store, named after its backend. */
export function storeReadiness(store: GraphStore): ReadinessCheck[] {
  return [{ name: store.name, check: () => store.check() }];
}

/**
 * The registry's HTTP app. Checks run in this order on every route but /health: API key (401),
 * path and method (404, 405), name (400), media type (415), size (413), schema complexity (422)
 * and content (400), then the store (503 when unreachable).
 */
export function createGraphRegistryApp(deps: GraphRegistryDeps): Koa {
  registerGraphMetrics(deps.registry, deps.store);
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry });
  const authenticate = requireApiKey(deps.apiKeys);
  const checker = deps.schemaChecker ?? createLazySchemaChecker();
  const settings = deps.schemaPublishing ?? DEFAULT_SCHEMA_PUBLISHING;
  const publisher = createSchemaPublisher({ settings });
  const composer = createSupergraphComposer({
    store: deps.store.federation,
    graphs: deps.store,
    checker,
    settings: deps.federation ?? DEFAULT_FEDERATION,
    logger: deps.logger,
    ...(deps.announcers === undefined ? {} : { announcer: deps.announcers.subgraphs }),
  });
  const router = createRouter({
    store: deps.store,
    ownSchema: ownSchemaSubject(deps.store.versions, checker, settings.keep, deps.announcers?.schema),
    composer,
    publisher,
    policy: settings.policy,
    authenticate,
    artifacts: createArtifactHandler(deps.store.federation, deps.cdn ?? { keys: [], target: 'default' }),
  });
  app.use(router.routes());
  // A path that is none of the routes: still 401 without a key, then 404.
  app.use(authenticate);
  app.use(() => {
    throw notFound();
  });
  return app;
}
