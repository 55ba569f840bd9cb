import { Router, type RouterMiddleware } from '@koa/router';
import { byMethod } from '@sp/platform';
import type { GraphStore } from '../graphs/graph-store.js';
import { deleteGraph, getGraph, listGraphs, putGraph } from '../graphs/graph-handlers.js';
import type { SchemaChecker } from '../schemas/schema-checker.js';
import { getSchema, putSchema } from '../schemas/schema-handlers.js';
import type { SchemaPublisher } from '../schemas/schema-publisher.js';
import { diffVersions, getVersion, listVersions, rollback } from '../schemas/schema-version-handlers.js';

const health: RouterMiddleware = (ctx) => {
  ctx.body = { status: 'ok' };
};

export interface RouterDeps {
  store: GraphStore;
  checker: SchemaChecker;
  publisher: SchemaPublisher;
  authenticate: RouterMiddleware;
}

/**
 * Every route of the API, one per path. `/health` is the only one without `authenticate`; on the
 * others it runs first, so a caller without a key learns nothing about paths, names or bodies.
 * `/schema…` comes before `/{name}`, so it is never taken for a name. Paths are case-sensitive.
 */
export function createRouter({ store, checker, publisher, authenticate }: RouterDeps): Router {
  const router = new Router({ sensitive: true });
  router.all('/health', byMethod({ GET: health }));
  router.all('/', authenticate, byMethod({ GET: listGraphs(store) }));
  router.all('/schema', authenticate, byMethod({ GET: getSchema(store), POST: putSchema(publisher) }));
  router.all('/schema/versions', authenticate, byMethod({ GET: listVersions(store.versions) }));
  router.all('/schema/versions/:version', authenticate, byMethod({ GET: getVersion(store.versions) }));
  router.all('/schema/diff', authenticate, byMethod({ GET: diffVersions(store.versions, checker) }));
  router.all('/schema/rollback', authenticate, byMethod({ POST: rollback(store.versions, publisher) }));
  router.all('/:name', authenticate, byMethod({ GET: getGraph(store), POST: putGraph(store), DELETE: deleteGraph(store) }));
  return router;
}
