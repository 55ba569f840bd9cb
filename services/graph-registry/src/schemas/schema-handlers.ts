import type { RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import { notFound } from '@sp/core';
import { readTextBody } from '../http/request-body.js';
import { keyFingerprint, type PublishOutcome, type PublishRequest, type SchemaPublisher } from './schema-publisher.js';
import type { SchemaSubject } from './schema-subject.js';

/** The subject a request is about: the registry's own schema, or the subgraph of the graph in its path. */
export type SubjectOf = (ctx: Koa.Context) => SchemaSubject;

/** Largest accepted body of `POST /schema`: 1 MiB. */
export const SCHEMA_BODY_LIMIT_BYTES = 1024 * 1024;
export const SCHEMA_MEDIA_TYPES: readonly string[] = ['text/plain', 'application/graphql'];

/** `GET /schema`, `GET /{name}/schema`: the newest SDL as text/plain, 404 when none is stored. */
export function getSchema(subjectOf: SubjectOf): RouterMiddleware {
  return async (ctx) => {
    const { sdl } = await subjectOf(ctx).history.latest();
    if (sdl === undefined) throw notFound();
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = sdl;
  };
}

/** Who publishes: the fingerprint of the key the request was let in with. */
export function publisherOf(ctx: Koa.Context): Pick<PublishRequest, 'publisher' | 'allowBreaking'> {
  return { publisher: keyFingerprint(ctx.get('x-api-key')), allowBreaking: ctx.get('x-allow-breaking-changes').toLowerCase() === 'true' };
}

export const REJECTED = 'breaking changes refused by the schema policy (reject-breaking); send X-Allow-Breaking-Changes: true to publish them';
export const NOT_COMPOSABLE = 'the subgraph schemas do not compose into a supergraph';

/** The answer to a publish or a rollback, by its outcome (openapi.yaml, `POST /schema`, `POST /{name}/schema`). */
export function answerPublish(ctx: Koa.Context, subject: SchemaSubject, result: PublishOutcome): void {
  switch (result.outcome) {
    case 'invalid': {
      const [first] = result.problems;
      ctx.status = 400;
      ctx.body = { error: first?.message, locations: first?.locations, problems: result.problems };
      return;
    }
    case 'not-composable':
      ctx.status = 409;
      ctx.body = { error: NOT_COMPOSABLE, baseVersion: result.baseVersion, errors: result.errors };
      return;
    case 'created':
      ctx.status = 201;
      ctx.set('Location', `${subject.path}/versions/${result.version.version}`);
      ctx.body = { created: true, version: result.version, report: result.report, ...(result.composed === undefined ? {} : { supergraph: result.composed }) };
      return;
    case 'unchanged':
      ctx.body = { created: false, version: result.version, report: result.report };
      return;
    case 'dry-run':
      ctx.body = { dryRun: true, baseVersion: result.baseVersion, unchanged: result.unchanged, report: result.report };
      return;
    case 'rejected':
      ctx.status = 409;
      ctx.body = { error: REJECTED, baseVersion: result.baseVersion, report: result.report };
  }
}

/**
 * `POST /schema[?dryRun=true]`, `POST /{name}/schema[?dryRun=true]`: publishes the SDL as a new
 * version when it is usable (graphql-js' checks for the registry's schema; composition with the
 * other subgraphs for a graph's): 201 with the version and its change report against the newest
 * version; 200 when it is the newest version's SDL already (nothing stored); a dry run answers
 * the report and stores nothing. 400 with the problems (at most 100) of an invalid schema; 409
 * for breaking changes under `reject-breaking` or a subgraph that does not compose; 422 past the
 * complexity limits (schema-checker.ts).
 */
export function putSchema(subjectOf: SubjectOf, publisher: SchemaPublisher): RouterMiddleware {
  return async (ctx) => {
    const subject = subjectOf(ctx);
    const sdl = await readTextBody(ctx, { limitBytes: SCHEMA_BODY_LIMIT_BYTES, types: SCHEMA_MEDIA_TYPES });
    answerPublish(ctx, subject, await publisher.publish(subject, { sdl, dryRun: ctx.query.dryRun === 'true', ...publisherOf(ctx) }));
  };
}
