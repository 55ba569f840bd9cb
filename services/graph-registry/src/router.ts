import { Router, type RouterMiddleware } from '@koa/router';
import { byMethod } from '@sp/platform';
import type { GraphStore } from './graph-store.js';
import { deleteGraph, getGraph, listGraphs, putGraph } from './graph-handlers.js';
import type { SchemaChecker } from './schema-checker.js';
import { getSchema, putSchema } from './schema-handlers.js';

const health: RouterMiddleware = (ctx) => {
  ctx.body = { status: 'ok' };
};

/**
 * Every route of the API, one per path. `/health` is the only one without `authenticate`; on the
 * others it runs first, so a caller without a key learns nothing about paths, names or bodies.
 * `/schema` comes before `/{name}`, so it is never taken for a name. Paths are case-sensitive.
 */
export function createRouter(store: GraphStore, checker: SchemaChecker, authenticate: RouterMiddleware): Router {
  const router = new Router({ sensitive: true });
  router.all('/health', byMethod({ GET: health }));
  router.all('/', authenticate, byMethod({ GET: listGraphs(store) }));
  router.all('/schema', authenticate, byMethod({ GET: getSchema(store), POST: putSchema(store, checker) }));
  router.all('/:name', authenticate, byMethod({ GET: getGraph(store), POST: putGraph(store), DELETE: deleteGraph(store) }));
  return router;
}
