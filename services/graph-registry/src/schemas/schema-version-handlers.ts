import type { RouterMiddleware } from '@koa/router';
import { badRequest, notFound, readBody } from '@sp/platform';
import type { SchemaChecker } from './schema-checker.js';
import { answerPublish, publisherOf } from './schema-handlers.js';
import type { SchemaPublisher } from './schema-publisher.js';
import type { SchemaVersions, StoredSchemaVersion } from './schema-versions.js';

const VERSION_NUMBER = /^[1-9][0-9]{0,8}$/;
const DEFAULT_PAGE = 20;
const MAX_PAGE = 100;

/** A version number from a path or query parameter (1 to 999 999 999), or a 400 naming it. */
function versionNumber(value: unknown, name: string): number {
  if (typeof value !== 'string' || !VERSION_NUMBER.test(value)) throw badRequest(`${name} must be a version number (a positive integer)`);
  return Number(value);
}

function pageSize(value: unknown): number {
  if (value === undefined) return DEFAULT_PAGE;
  const limit = typeof value === 'string' && /^[0-9]{1,3}$/.test(value) ? Number(value) : 0;
  if (limit < 1 || limit > MAX_PAGE) throw badRequest(`limit must be an integer from 1 to ${MAX_PAGE}`);
  return limit;
}

async function stored(versions: SchemaVersions, version: number): Promise<StoredSchemaVersion> {
  const entry = await versions.get(version);
  if (entry === undefined) throw notFound(`no schema version ${version}`);
  return entry;
}

/** `GET /schema/versions?limit=&before=`: versions newest first, without SDL; `next` pages on. */
export function listVersions(versions: SchemaVersions): RouterMiddleware {
  return async (ctx) => {
    const limit = pageSize(ctx.query.limit);
    const before = ctx.query.before === undefined ? undefined : versionNumber(ctx.query.before, 'before');
    const page = await versions.list(before, limit + 1);
    const shown = page.slice(0, limit);
    const last = shown[shown.length - 1];
    ctx.body = { versions: shown, next: page.length > limit && last !== undefined ? `/schema/versions?limit=${limit}&before=${last.version}` : null };
  };
}

/** `GET /schema/versions/{version}`: the version's metadata, SDL and change report; 404 when unknown or dropped. */
export function getVersion(versions: SchemaVersions): RouterMiddleware {
  return async (ctx) => {
    ctx.body = await stored(versions, versionNumber(ctx.params.version, 'version'));
  };
}

/** `GET /schema/diff?from=n&to=m`: the change report from version n to version m (either order), computed in a worker. */
export function diffVersions(versions: SchemaVersions, checker: SchemaChecker): RouterMiddleware {
  return async (ctx) => {
    const from = versionNumber(ctx.query.from, 'from');
    const to = versionNumber(ctx.query.to, 'to');
    const [before, after] = await Promise.all([stored(versions, from), stored(versions, to)]);
    const { report } = await checker.compare(after.sdl, before.sdl);
    ctx.body = { from, to, report };
  };
}

/**
 * `POST /schema/rollback` with `{"version": n}`: publishes version n's SDL again as a new
 * version, with its own change report, under the same policy as `POST /schema`; history is
 * never rewritten.
 */
export function rollback(versions: SchemaVersions, publisher: SchemaPublisher): RouterMiddleware {
  return async (ctx) => {
    const body = await readBody(ctx, { limitBytes: 1024, types: ['application/json'] });
    let version: unknown;
    try {
      version = (JSON.parse(body.toString('utf8')) as { version?: unknown }).version;
    } catch {
      throw badRequest('body must be JSON: {"version": <number>}');
    }
    const target = await stored(versions, versionNumber(typeof version === 'number' ? String(version) : undefined, 'version'));
    answerPublish(ctx, await publisher.publish({ sdl: target.sdl, dryRun: false, rollbackOf: target.version, ...publisherOf(ctx) }));
  };
}
