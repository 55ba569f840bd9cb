import type Koa from 'koa';
import { connectRedis, createHttpApp, parseRedisUrl, notFound, requireApiKey, type EventPublisher, type Logger, type ReadinessCheck, type Registry, type StoreConfig } from '@sp/platform';
import type { GraphStore } from '../graphs/graph-store.js';
import { createMemoryGraphStore } from '../graphs/memory-graph-store.js';
import { createRedisGraphStore } from '../graphs/redis-graph-store.js';
import { registerGraphMetrics } from './registry-metrics.js';
import { createRouter } from './router.js';
import { createLazySchemaChecker, type SchemaChecker } from '../schemas/schema-checker.js';
import { createSchemaPublisher, DEFAULT_SCHEMA_PUBLISHING, type SchemaPublishing } from '../schemas/schema-publisher.js';

export interface GraphRegistryDeps {
  store: GraphStore;
  /** Checks uploaded schemas off the event loop; by default a checker with the default limits whose worker starts with the first schema. */
  schemaChecker?: SchemaChecker;
  /** Policy, retention and event topic of schema versions; DEFAULT_SCHEMA_PUBLISHING by default. */
  schemaPublishing?: SchemaPublishing;
  /** Where SchemaPublishedEvent goes; without one, versions are published without events. */
  events?: EventPublisher;
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
  const publisher = createSchemaPublisher({
    versions: deps.store.versions,
    checker,
    settings: deps.schemaPublishing ?? DEFAULT_SCHEMA_PUBLISHING,
    logger: deps.logger,
    ...(deps.events === undefined ? {} : { events: deps.events }),
  });
  app.use(createRouter({ store: deps.store, checker, publisher, authenticate }).routes());
  // A path that is none of the routes: still 401 without a key, then 404.
  app.use(authenticate);
  app.use(() => {
    throw notFound();
  });
  return app;
}
