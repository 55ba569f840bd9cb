import { Router, type RouterMiddleware } from '@koa/router';
import type { Middleware } from 'koa';
import { byMethod } from '@sp/http';
import type { SupergraphComposer } from '../federation/supergraph-composer.js';
import { deleteSubgraph, getSupergraph, getSupergraphVersion, listSupergraphVersions } from '../federation/supergraph-handlers.js';
import { deleteGraph, getGraph, listGraphs, putGraph } from '../graphs/graph-handlers.js';
import type { GraphStore } from '../graphs/graph-store.js';
import { validateName } from '../graphs/names.js';
import { getSchema, putSchema, type SubjectOf } from '../schemas/schema-handlers.js';
import type { SchemaPolicy, SchemaPublisher } from '../schemas/schema-publisher.js';
import type { SchemaSubject } from '../schemas/schema-subject.js';
import { diffVersions, getVersion, listVersions, rollback } from '../schemas/schema-version-handlers.js';

const health: RouterMiddleware = (ctx) => {
  ctx.body = { status: 'ok' };
};

export interface RouterDeps {
  store: GraphStore;
  /** The registry's own schema (`/schema`). */
  ownSchema: SchemaSubject;
  composer: SupergraphComposer;
  publisher: SchemaPublisher;
  policy: SchemaPolicy;
  authenticate: RouterMiddleware;
  /** The supergraph's artifacts over Hive's CDN protocol (their own key: `X-Hive-CDN-Key`). */
  artifacts: Middleware;
}

/** The routes of one schema subject under `prefix` (`/schema` or `/:name/schema`): one mechanism for both; `remove`: a subgraph's DELETE. */
function schemaRoutes(router: Router, prefix: string, subjectOf: SubjectOf, { publisher, authenticate, remove }: Pick<RouterDeps, 'publisher' | 'authenticate'> & { remove?: RouterMiddleware }): void {
  router.all(prefix, authenticate, byMethod({ GET: getSchema(subjectOf), POST: putSchema(subjectOf, publisher), ...(remove === undefined ? {} : { DELETE: remove }) }));
  router.all(`${prefix}/versions`, authenticate, byMethod({ GET: listVersions(subjectOf) }));
  router.all(`${prefix}/versions/:version`, authenticate, byMethod({ GET: getVersion(subjectOf) }));
  router.all(`${prefix}/diff`, authenticate, byMethod({ GET: diffVersions(subjectOf) }));
  router.all(`${prefix}/rollback`, authenticate, byMethod({ POST: rollback(subjectOf, publisher) }));
}

/**
 * Every route of the API, one per path. `/health` and the CDN's `/artifacts/…` (which checks its
 * own read-only key) are the only ones without `authenticate`; on the others it runs first, so a
 * caller without a key learns nothing about paths, names or bodies. The registry's own paths
 * (`/schema…`, `/supergraph…`) come before `/{name}`, so they are never taken for a name. Paths
 * are case-sensitive.
 */
export function createRouter(deps: RouterDeps): Router {
  const { store, composer, authenticate } = deps;
  const federation = store.federation;
  const router = new Router({ sensitive: true });
  router.all('/health', byMethod({ GET: health }));
  router.all('/artifacts{/*path}', deps.artifacts);
  router.all('/', authenticate, byMethod({ GET: listGraphs(store) }));
  schemaRoutes(router, '/schema', () => deps.ownSchema, deps);
  router.all('/supergraph', authenticate, byMethod({ GET: getSupergraph(federation) }));
  router.all('/supergraph/versions', authenticate, byMethod({ GET: listSupergraphVersions(federation) }));
  router.all('/supergraph/versions/:version', authenticate, byMethod({ GET: getSupergraphVersion(federation) }));
  const subgraphOf: SubjectOf = (ctx) => composer.subject(validateName((ctx.params as Record<string, string | undefined>).name));
  schemaRoutes(router, '/:name/schema', subgraphOf, { ...deps, remove: deleteSubgraph(composer, deps.policy) });
  router.all('/:name', authenticate, byMethod({ GET: getGraph(store), POST: putGraph(store, composer), DELETE: deleteGraph(store, composer, deps.policy) }));
  return router;
}
