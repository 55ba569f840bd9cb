import type { RouterMiddleware } from '@koa/router';
import { notFound } from '@sp/platform';
import type { GraphStore } from './graph-store.js';
import { parseGraphUrl } from './graph-url.js';
import { validateName } from './names.js';
import { readTextBody } from './request-body.js';

/** Largest accepted body of `POST /{name}`: 64 KiB. */
export const URL_BODY_LIMIT_BYTES = 64 * 1024;
export const URL_MEDIA_TYPES: readonly string[] = ['text/plain'];

/** `GET /`: every graph as `{"graphs": {"<name>": "<url>", …}}`, names in ascending order. */
export function listGraphs(store: GraphStore): RouterMiddleware {
  return async (ctx) => {
    ctx.body = { graphs: Object.fromEntries(await store.listUrls()) };
  };
}

/**
 * `GET /{name}`: the URL as text/plain, 404 when the name is not registered. A promise chain
 * rather than an async function: this is the registry's hot path (bench/graph-registry.bench.ts).
 */
export function getGraph(store: GraphStore): RouterMiddleware {
  return (ctx) =>
    store.getUrl(validateName(ctx.params.name)).then((url) => {
      if (url === undefined) throw notFound();
      ctx.type = 'text/plain; charset=utf-8';
      ctx.body = url;
    });
}

/** `POST /{name}`: stores (or replaces) the URL sent as text/plain; 204. */
export function putGraph(store: GraphStore): RouterMiddleware {
  return async (ctx) => {
    const name = validateName(ctx.params.name);
    const url = parseGraphUrl(await readTextBody(ctx, { limitBytes: URL_BODY_LIMIT_BYTES, types: URL_MEDIA_TYPES }));
    await store.setUrl(name, url);
    ctx.status = 204;
  };
}

/** `DELETE /{name}`: 204 when removed, 404 when the name was not registered. */
export function deleteGraph(store: GraphStore): RouterMiddleware {
  return async (ctx) => {
    if (!(await store.deleteUrl(validateName(ctx.params.name)))) throw notFound();
    ctx.status = 204;
  };
}
