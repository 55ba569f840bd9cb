import { Readable } from 'node:stream';
import type { RouterMiddleware } from '@koa/router';
import { notFound } from '@sp/core';
import { answerRefusedRemoval, removalOptions } from '../federation/supergraph-handlers.js';
import type { SupergraphComposer } from '../federation/supergraph-composer.js';
import { publisherOf } from '../schemas/schema-handlers.js';
import type { SchemaPolicy } from '../schemas/schema-publisher.js';
import type { GraphStore } from './graph-store.js';
import { parseGraphUrl } from './graph-url.js';
import { validateName } from './names.js';
import { readTextBody } from '../http/request-body.js';

/** Largest accepted body of `POST /{name}`: 64 KiB. */
export const URL_BODY_LIMIT_BYTES = 64 * 1024;
export const URL_MEDIA_TYPES: readonly string[] = ['text/plain'];

/** The JSON text of `{"graphs": {…}}`, a page of graphs at a time. */
async function* graphListJson(first: IteratorResult<Map<string, string>>, rest: AsyncIterator<Map<string, string>>): AsyncGenerator<string> {
  yield '{"graphs":{';
  let separator = '';
  for (let page = first; page.done !== true; page = await rest.next()) {
    let chunk = '';
    for (const [name, url] of page.value) {
      chunk += `${separator}${JSON.stringify(name)}:${JSON.stringify(url)}`;
      separator = ',';
    }
    yield chunk;
  }
  yield '}}';
}

/**
 * `GET /`: every graph as `{"graphs": {"<name>": "<url>", …}}`, names in ascending order. Sent
 * as it is read, a page at a time: the whole list as one object would be made and serialized on
 * the event loop in one go (seconds, and too large for one string, at a few hundred thousand
 * long URLs). The first page is read before answering, so a store that cannot be reached is
 * still a 503; a failure later cuts the answer short.
 */
export function listGraphs(store: GraphStore): RouterMiddleware {
  return async (ctx) => {
    const pages = store.listUrls()[Symbol.asyncIterator]();
    const first = await pages.next();
    ctx.type = 'application/json; charset=utf-8';
    ctx.body = Readable.from(graphListJson(first, pages));
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

/**
 * `POST /{name}`: stores (or replaces) the URL sent as text/plain; 204. The URL is the routing URL
 * of the graph's subgraph: when the graph is one, the supergraph is composed again with it.
 */
export function putGraph(store: GraphStore, composer: SupergraphComposer): RouterMiddleware {
  return async (ctx) => {
    const name = validateName(ctx.params.name);
    const url = parseGraphUrl(await readTextBody(ctx, { limitBytes: URL_BODY_LIMIT_BYTES, types: URL_MEDIA_TYPES }));
    await composer.recompose(name, 'url', { publisher: publisherOf(ctx).publisher, rejectBreaking: false, write: () => store.setUrl(name, url) });
    ctx.status = 204;
  };
}

/**
 * `DELETE /{name}`: 204 when removed, 404 when the name was not registered. A subgraph leaves the
 * supergraph first: when the others no longer compose without it, or (under `reject-breaking`,
 * without the override) its removal breaks the public API, 409 and nothing is removed.
 */
export function deleteGraph(store: GraphStore, composer: SupergraphComposer, policy: SchemaPolicy): RouterMiddleware {
  return async (ctx) => {
    const name = validateName(ctx.params.name);
    let removed = false;
    const write = async (): Promise<void> => {
      removed = await store.deleteUrl(name);
    };
    const outcome = await composer.recompose(name, 'remove', removalOptions(ctx, policy, write));
    if (answerRefusedRemoval(ctx, name, outcome)) return;
    if (!removed) throw notFound();
    ctx.status = 204;
  };
}
