import type { RouterMiddleware } from '@koa/router';
import type Koa from 'koa';
import { badRequest, notFound } from '@sp/core';
import { readBody } from '@sp/http';
import { answerPublish, publisherOf, type SubjectOf } from './schema-handlers.js';
import type { SchemaPublisher } from './schema-publisher.js';
import type { SchemaHistory, StoredSchemaVersion } from './schema-versions.js';

const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/** A version number from a path or query parameter (1 to 999 999 999), or a 400 naming it. */
export function versionNumber(value: unknown, name: string): number {
  if (typeof value !== 'string' || !VERSION_NUMBER.test(value)) throw badRequest(`${name} must be a version number (a positive integer)`);
  return Number(value);
}

/** `limit` of a listing: 20 when absent, 1 to 100, else a 400. */
export function pageSize(value: unknown): number {
  if (value === undefined) return DEFAULT_PAGE;
  const limit = typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : 0;
  if (limit < 1 || limit > MAX_PAGE) throw badRequest(`limit must be an integer from 1 to ${MAX_PAGE}`);
  return limit;
}

async function stored(versions: SchemaHistory, version: number): Promise<StoredSchemaVersion> {
  const entry = await versions.get(version);
  if (entry === undefined) throw notFound(`no schema version ${version}`);
  return entry;
}

/**
 * A page of a version listing, newest first: `read(before, n)` is asked for one more than the
 * page so that `next` (the path of the following page, under `path`) is known.
 */
export async function versionPage<T extends { version: number }>(ctx: Koa.Context, path: string, read: (before: number | undefined, limit: number) => Promise<T[]>): Promise<{ versions: T[]; next: string | null }> {
  const limit = pageSize(ctx.query.limit);
  const before = ctx.query.before === undefined ? undefined : versionNumber(ctx.query.before, 'before');
  const page = await read(before, limit + 1);
  const shown = page.slice(0, limit);
  const last = shown[shown.length - 1];
  return { versions: shown, next: page.length > limit && last !== undefined ? `${path}?limit=${limit}&before=${last.version}` : null };
}

/** `GET /schema/versions?limit=&before=` (and a subgraph's): versions newest first, without SDL; `next` pages on. */
export function listVersions(subjectOf: SubjectOf): RouterMiddleware {
  return async (ctx) => {
    const subject = subjectOf(ctx);
    ctx.body = await versionPage(ctx, `${subject.path}/versions`, (before, limit) => subject.history.list(before, limit));
  };
}

/** `GET /schema/versions/{version}` (and a subgraph's): the version's metadata, SDL and change report; 404 when unknown or dropped. */
export function getVersion(subjectOf: SubjectOf): RouterMiddleware {
  return async (ctx) => {
    ctx.body = await stored(subjectOf(ctx).history, versionNumber(ctx.params.version, 'version'));
  };
}

/** `GET /schema/diff?from=n&to=m` (and a subgraph's): the change report from version n to version m (either order), computed in a worker. */
export function diffVersions(subjectOf: SubjectOf): RouterMiddleware {
  return async (ctx) => {
    const subject = subjectOf(ctx);
    const from = versionNumber(ctx.query.from, 'from');
    const to = versionNumber(ctx.query.to, 'to');
    const [before, after] = await Promise.all([stored(subject.history, from), stored(subject.history, to)]);
    ctx.body = { from, to, report: await subject.diff(before.sdl, after.sdl) };
  };
}

/**
 * `POST /schema/rollback` with `{"version": n}`: publishes version n's SDL again as a new
 * version, with its own change report, under the same policy as `POST /schema`; history is
 * never rewritten.
 */
export function rollback(subjectOf: SubjectOf, publisher: SchemaPublisher): RouterMiddleware {
  return async (ctx) => {
    const subject = subjectOf(ctx);
    const body = await readBody(ctx, { limitBytes: 1024, types: ['application/json'] });
    let version: unknown;
    try {
      version = (JSON.parse(body.toString('utf8')) as { version?: unknown }).version;
    } catch {
      throw badRequest('body must be JSON: {"version": <number>}');
    }
    const target = await stored(subject.history, versionNumber(typeof version === 'number' ? String(version) : undefined, 'version'));
    answerPublish(ctx, subject, await publisher.publish(subject, { sdl: target.sdl, dryRun: false, rollbackOf: target.version, ...publisherOf(ctx) }));
  };
}
