import type { RouterMiddleware } from '@koa/router';
import { notFound } from '@sp/platform';
import { versionNumber, versionPage } from '../schemas/schema-version-handlers.js';
import type { FederationStore } from './federation-store.js';

/**
 * `GET /supergraph[?version=n]`: the supergraph SDL of the newest version (or of version n) as
 * text/plain, with `X-Supergraph-Version`, `X-Hive-Schema-Version-Id` and `ETag`; 404 when there
 * is none (no subgraph yet, the last one removed, or version n not kept). Gateways read it over
 * the CDN protocol instead (`/artifacts/v1/…`, with a read-only key).
 */
export function getSupergraph(store: FederationStore): RouterMiddleware {
  return async (ctx) => {
    const version = ctx.query.version === undefined ? await store.lastSupergraph() : versionNumber(ctx.query.version, 'version');
    const info = version === 0 ? undefined : await store.supergraphInfo(version);
    if (info === undefined || info.subgraphs.length === 0) throw notFound('no supergraph: no subgraph has a schema');
    const sdl = await store.artifact(version, 'supergraph');
    if (sdl === undefined) throw notFound();
    ctx.set('X-Supergraph-Version', String(version));
    ctx.set('X-Hive-Schema-Version-Id', info.id);
    ctx.set('ETag', info.etags.supergraph);
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = sdl;
  };
}

/** `GET /supergraph/versions?limit=&before=`: supergraph versions newest first (each with the subgraph versions it was composed from). */
export function listSupergraphVersions(store: FederationStore): RouterMiddleware {
  return async (ctx) => {
    ctx.body = await versionPage(ctx, '/supergraph/versions', (before, limit) => store.listSupergraphs(before, limit));
  };
}

/** `GET /supergraph/versions/{version}`: the version and the change report of its public API; 404 when unknown or dropped. */
export function getSupergraphVersion(store: FederationStore): RouterMiddleware {
  return async (ctx) => {
    const version = versionNumber(ctx.params.version, 'version');
    const [info, report] = await Promise.all([store.supergraphInfo(version), store.supergraphReport(version)]);
    if (info === undefined || report === undefined) throw notFound(`no supergraph version ${version}`);
    ctx.body = { ...info, report };
  };
}
