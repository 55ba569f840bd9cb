import type { RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import { notFound } from '@sp/core';
import { validateName } from '../graphs/names.js';
import { NOT_COMPOSABLE, publisherOf, REJECTED } from '../schemas/schema-handlers.js';
import type { SchemaPolicy } from '../schemas/schema-publisher.js';
import { versionNumber, versionPage } from '../schemas/schema-version-handlers.js';
import type { FederationStore } from './federation-store.js';
import type { RecomposeOutcome, RecomposeOptions, SupergraphComposer } from './supergraph-composer.js';

/** Answers a removal the supergraph refused (409: the rest does not compose, or the policy); false when it went through. */
export function answerRefusedRemoval(ctx: Koa.Context, name: string, outcome: RecomposeOutcome): boolean {
  if (outcome.outcome === 'not-composable') {
    ctx.status = 409;
    ctx.body = { error: `${NOT_COMPOSABLE} without ${name}`, errors: outcome.errors };
    return true;
  }
  if (outcome.outcome === 'rejected') {
    ctx.status = 409;
    ctx.body = { error: REJECTED, report: outcome.report };
    return true;
  }
  return false;
}

/** The options of a removal requested by `ctx`: its publisher, and whether the policy refuses breaking changes for it. */
export function removalOptions(ctx: Koa.Context, policy: SchemaPolicy, write: () => Promise<void>): RecomposeOptions {
  const { publisher, allowBreaking } = publisherOf(ctx);
  return { publisher, rejectBreaking: policy === 'reject-breaking' && !allowBreaking, write };
}

/**
 * `DELETE /{name}/schema`: the graph's subgraph leaves the supergraph (which is composed again
 * without it) and its schema history is dropped; the graph's URL stays. 204; 404 when the graph
 * has no subgraph schema; 409 when the others do not compose without it, or under
 * `reject-breaking` (without the override) when its removal breaks the public API.
 */
export function deleteSubgraph(composer: SupergraphComposer, policy: SchemaPolicy): RouterMiddleware {
  return async (ctx) => {
    const name = validateName(ctx.params.name);
    const outcome = await composer.recompose(name, 'remove', removalOptions(ctx, policy, () => Promise.resolve()));
    if (answerRefusedRemoval(ctx, name, outcome)) return;
    if (outcome.outcome === 'not-a-subgraph') throw notFound(`graph ${name} has no subgraph schema`);
    ctx.status = 204;
  };
}

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
