import type { RouterMiddleware } from '@koa/router';
import { notFound } from '@sp/platform';
import type { GraphStore } from './graph-store.js';
import { readTextBody } from './request-body.js';
import type { SchemaChecker } from './schema-checker.js';

/** Largest accepted body of `POST /schema`: 1 MiB. */
export const SCHEMA_BODY_LIMIT_BYTES = 1024 * 1024;
export const SCHEMA_MEDIA_TYPES: readonly string[] = ['text/plain', 'application/graphql'];

/** `GET /schema`: the stored SDL as text/plain, 404 when none is stored. */
export function getSchema(store: GraphStore): RouterMiddleware {
  return async (ctx) => {
    const sdl = await store.getSchema();
    if (sdl === undefined) throw notFound();
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = sdl;
  };
}

/**
 * `POST /schema`: stores the SDL when graphql-js accepts it as a usable schema (204). Otherwise
 * 400 with the first problem in `error`/`locations` and every problem (at most 100) in
 * `problems`, each with line and column; 422 past the complexity limits (schema-checker.ts).
 */
export function putSchema(store: GraphStore, checker: SchemaChecker): RouterMiddleware {
  return async (ctx) => {
    const sdl = await readTextBody(ctx, { limitBytes: SCHEMA_BODY_LIMIT_BYTES, types: SCHEMA_MEDIA_TYPES });
    const problems = await checker.check(sdl);
    const [first] = problems;
    if (first !== undefined) {
      ctx.status = 400;
      ctx.body = { error: first.message, locations: first.locations, problems };
      return;
    }
    await store.setSchema(sdl);
    ctx.status = 204;
  };
}
