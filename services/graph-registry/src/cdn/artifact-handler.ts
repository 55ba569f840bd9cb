import type { Middleware } from 'koa';
import type Koa from 'koa';
import { createSecretMatcher } from '@sp/identity';
import type { ArtifactKind, FederationStore, SupergraphVersionInfo } from '../federation/federation-store.js';

export interface CdnSettings {
  /** The read-only keys accepted in `X-Hive-CDN-Key` (several while one is rotated); none: every key is refused. */
  keys: readonly string[];
  /** The target id of the paths (`/artifacts/v1/{target}/…`). */
  target: string;
}

/** The artifact names of Hive's CDN, and what each serves. */
const ARTIFACTS: Readonly<Record<string, ArtifactKind>> = {
  supergraph: 'supergraph',
  sdl: 'sdl',
  'sdl.graphql': 'sdl',
  'sdl.graphqls': 'sdl',
  services: 'services',
  metadata: 'metadata',
};

const CONTENT_TYPES: Readonly<Record<ArtifactKind, string>> = {
  supergraph: 'text/plain',
  sdl: 'text/plain',
  services: 'application/json',
  metadata: 'application/json',
};

/** Versioned artifacts never change: clients and proxies may keep them for a year, as Hive's CDN says. */
const IMMUTABLE = 'public, max-age=31536000, immutable';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DESCRIPTION = 'See the graph registry README, "The supergraph over Hive\'s CDN protocol"';

/** Versions whose metadata and artifacts are kept in memory (the newest ones: what gateways poll). */
const CACHED_VERSIONS = 4;

type Request = { version: 'latest' } | { version: 'id'; id: string };

interface Cached {
  info: SupergraphVersionInfo;
  texts: Partial<Record<ArtifactKind, string>>;
}

function notFound(ctx: Koa.Context): void {
  ctx.status = 404;
  ctx.set('Content-Type', 'text/plain');
  ctx.body = 'Not found.';
}

function refuse(ctx: Koa.Context, status: 400 | 403, code: string, error: string): void {
  ctx.status = status;
  ctx.set('Content-Type', 'application/json');
  ctx.body = JSON.stringify({ code, error, description: DESCRIPTION });
}

/** Whether `If-None-Match` (a list of entity tags, weak ones compared weakly as RFC 9110 says, or `*`) names `etag`. */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  return header.split(',').some((candidate) => {
    const tag = candidate.trim();
    return tag === '*' || (tag.startsWith('W/') ? tag.slice(2) : tag) === etag;
  });
}

/** Path segments after `/artifacts/v1/`: `{target}/{artifact}` or `{target}/version/{versionId}/{artifact}`; undefined for any other path. */
function parsePath(path: string): { target: string; artifact: string; request: Request } | undefined {
  const segments = path.split('/');
  if (segments[1] !== 'artifacts' || segments[2] !== 'v1') return undefined;
  const [target, ...rest] = segments.slice(3);
  if (target === undefined || target === '') return undefined;
  if (rest.length === 1) return { target, artifact: rest[0]!, request: { version: 'latest' } };
  if (rest.length === 3 && rest[0] === 'version' && UUID.test(rest[1]!)) return { target, artifact: rest[2]!, request: { version: 'id', id: rest[1]!.toLowerCase() } };
  return undefined;
}

/**
 * The supergraph's artifacts as Hive's CDN serves them, so that gateways read them unchanged (Hive
 * Gateway's `hive` supergraph source, Apollo Gateway through `@graphql-hive/apollo`, Hive Router):
 * `GET /artifacts/v1/{target}/{supergraph|sdl|sdl.graphql|sdl.graphqls|services|metadata}` and
 * `…/{target}/version/{versionId}/{artifact}`. In Hive's order: an unknown path or artifact 404
 * (before the key, as Hive does: it says nothing of the data); `/schema` 301 to `/services`
 * (Hive's legacy name); no `X-Hive-CDN-Key` 400 `MISSING_AUTH_KEY`; a key that is not a CDN key,
 * or a target that is not this one, 403 `INVALID_AUTH_KEY` (the same answer for both: the
 * targets are not revealed); then 404 when there is no supergraph (or the version is not kept),
 * 304 when `If-None-Match` names the artifact's ETag, else 200 with the stored bytes, their ETag
 * (computed when composed) and `x-hive-schema-version-id`. Versioned answers may be cached for
 * good. The newest versions are kept in memory; each request reads the newest number once from
 * the store, so every replica serves the newest version as soon as it is stored.
 */
export function createArtifactHandler(store: FederationStore, settings: CdnSettings): Middleware {
  const isCdnKey = createSecretMatcher(settings.keys);
  const cache = new Map<number, Cached>();

  async function cached(version: number): Promise<Cached | undefined> {
    const hit = cache.get(version);
    if (hit !== undefined) return hit;
    const info = await store.supergraphInfo(version);
    if (info === undefined) return undefined;
    const entry = { info, texts: {} };
    cache.set(version, entry);
    for (const old of [...cache.keys()].sort((a, b) => a - b).slice(0, Math.max(0, cache.size - CACHED_VERSIONS))) cache.delete(old);
    return entry;
  }

  async function text(version: number, entry: Cached, kind: ArtifactKind): Promise<string | undefined> {
    const known = entry.texts[kind];
    if (known !== undefined) return known;
    const stored = await store.artifact(version, kind);
    if (stored !== undefined) entry.texts[kind] = stored;
    return stored;
  }

  const versionOf = async (request: Request): Promise<number | undefined> => (request.version === 'latest' ? store.lastSupergraph() : store.versionOfId(request.id));

  /** The path's checks in Hive's order: a path or artifact it does not serve 404, `schema` 301, then the key (400, 403). Undefined when answered. */
  function admitted(ctx: Koa.Context): { request: Request; kind: ArtifactKind } | undefined {
    const parsed = ctx.method === 'GET' || ctx.method === 'HEAD' ? parsePath(ctx.path) : undefined;
    if (parsed === undefined) return void notFound(ctx);
    if (parsed.artifact === 'schema' && parsed.request.version === 'latest') {
      ctx.status = 301;
      ctx.set('Location', ctx.path.replace(/\/schema$/, '/services'));
      ctx.body = 'Found.';
      return undefined;
    }
    const kind = ARTIFACTS[parsed.artifact];
    if (kind === undefined) return void notFound(ctx);
    const key = ctx.get('x-hive-cdn-key');
    if (key === '') return void refuse(ctx, 400, 'MISSING_AUTH_KEY', 'CDN key is missing: send it in X-Hive-CDN-Key');
    // The key is compared first and in constant time whatever the target, so the answer's timing does not tell targets apart.
    if (!isCdnKey(key) || parsed.target !== settings.target) return void refuse(ctx, 403, 'INVALID_AUTH_KEY', 'CDN key is invalid, or it does not match the requested target ID');
    return { request: parsed.request, kind };
  }

  return async (ctx) => {
    const admission = admitted(ctx);
    if (admission === undefined) return;
    const { request, kind } = admission;
    const version = await versionOf(request);
    const entry = version === undefined || version === 0 ? undefined : await cached(version);
    if (entry === undefined || entry.info.subgraphs.length === 0) return notFound(ctx);
    const etag = entry.info.etags[kind];
    ctx.set('ETag', etag);
    ctx.set('x-hive-schema-version-id', entry.info.id);
    if (request.version === 'id') ctx.set('Cache-Control', IMMUTABLE);
    if (matchesEtag(ctx.get('if-none-match') || undefined, etag)) {
      ctx.status = 304;
      return;
    }
    const body = await text(entry.info.version, entry, kind);
    if (body === undefined) return notFound(ctx);
    ctx.set('Content-Type', CONTENT_TYPES[kind]);
    ctx.body = body;
  };
}
