import type Koa from 'koa';
import { AppError, badRequest, unauthorized } from '@sp/core';
import { answerEmpty, type DirectRoute } from '@sp/http';
import { forwardedRequest } from './forwarded-request.js';
import { identityHeaders } from './identity-headers.js';
import { singleQueryValue } from './login.js';
import { readSessionCookie } from '../sessions/session-cookie.js';
import type { TokenRecord } from '../sessions/token-store.js';
import type { AuthServices, AuthSettings } from '../services.js';

/** What forwardAuth uses. */
export type ForwardAuthDeps = Pick<AuthServices, 'tokens' | 'sessions' | 'now'> & {
  settings: Pick<AuthSettings, 'identityHeaders' | 'groups' | 'allowedRedirects' | 'publicBaseUrl' | 'proxyHops'>;
};

/** A browser's top-level navigation says so; fetch(), XHR and API clients do not. */
const wantsHtml = (ctx: Koa.Context): boolean => /(^|[\s,])text\/html\s*(;|,|$)/i.test(ctx.get('accept'));

/**
 * Where a browser denied by GET /auth signs in and comes back to the page it asked for: the page is
 * the one the proxy in front names (forwarded-request.ts, behind Auth__TrustProxy), asked for with
 * GET or HEAD, and on the allowlist. Undefined for anyone else: an API client must not be sent to a
 * login page, a POST's body would be lost, an unknown or foreign page is no place to come back to.
 */
function signInUrl(ctx: Koa.Context, settings: ForwardAuthDeps['settings']): string | undefined {
  if (!wantsHtml(ctx)) return undefined;
  const original = forwardedRequest(ctx.req.headersDistinct, ctx.method, settings.proxyHops > 0);
  if (original.url === undefined || (original.method !== 'GET' && original.method !== 'HEAD')) return undefined;
  const page = settings.allowedRedirects.check(original.url.href);
  return page === undefined ? undefined : `${settings.publicBaseUrl}/signin?rd=${encodeURIComponent(page)}`;
}

/**
 * The answer without a live session. With `?signin=redirect` (proxies that hand the auth answer to
 * the client as it is: Traefik, Caddy, Envoy) a browser that can sign in gets a 302 there. Otherwise
 * 401, carrying that URL in `Location` when there is one: nginx's `auth_request` accepts only 2xx,
 * 401 and 403, and its configuration (docs/forward-auth/nginx.conf) redirects to it itself, already
 * encoded and checked, as Authelia's does.
 */
function deny(ctx: Koa.Context, settings: ForwardAuthDeps['settings']): void {
  const mode = singleQueryValue(ctx, 'signin');
  if (mode !== undefined && mode !== 'redirect') throw badRequest('signin must be redirect');
  const target = signInUrl(ctx, settings);
  if (target === undefined) throw unauthorized();
  if (mode === 'redirect') {
    ctx.status = 302;
    ctx.set('Location', target);
    return;
  }
  throw new AppError(401, 'unauthorized', 'unauthorized', { headers: { Location: target } });
}

export interface ForwardAuth {
  /**
   * The answer to a session the near cache holds and that is not due, before Koa (app.ts): the
   * path most requests take. Anything else (no cookie, a miss, a record due for renewal) is left
   * to `middleware`.
   */
  fromMemory: DirectRoute;
  /** GET /auth as a Koa route: every case, the one `fromMemory` answers included. */
  middleware: Koa.Middleware;
}

/**
 * GET /auth, the forward-auth endpoint of a reverse proxy or the GraphQL gateway (like
 * oauth2-proxy's): 200 with `Authorization: Bearer <access token>` and the identity headers
 * (identity-headers.ts) when the TokenId cookie maps to a live session, 401 otherwise (a redirect
 * to sign in for browsers with `?signin=redirect`, `deny`); the session's access token is
 * renewed before it expires (503 when it has expired and cannot be renewed now). The hot path of every authenticated
 * request: no cache call for a session the near cache holds, one read otherwise.
 */
export function forwardAuth(deps: ForwardAuthDeps): ForwardAuth {
  // The headers of each record the near cache holds, built once: GET /auth runs on every
  // authenticated request, and the ~1.4 KB string would otherwise be built and scanned each time.
  // Keyed by the record object (one per stored buffer: memoizedJsonSerializer), so they go when
  // the near cache drops the record.
  const grants = new WeakMap<TokenRecord, readonly string[]>();
  const grant = (record: TokenRecord): readonly string[] => {
    let headers = grants.get(record);
    if (headers === undefined) {
      headers = ['Authorization', `Bearer ${record.accessToken}`, ...identityHeaders(record, deps.settings.identityHeaders, deps.settings.groups)];
      grants.set(record, headers);
    }
    return headers;
  };
  // A session the near cache holds and that is not yet due for renewal is answered at once: no
  // promise, no cache call. `renewAtMs` never lies past the token's expiry, so this one comparison
  // is also the expiry check. Revocation is the token store's: `recall` refuses a token id this
  // replica removed, and the near cache drops what any replica changed.
  const servable = (known: TokenRecord | undefined): known is TokenRecord => known !== undefined && known.renewAtMs > deps.now();

  // Never an expired token: a session whose token has expired is renewed first (session-keeper.ts).
  const answer = (ctx: Koa.Context, record: TokenRecord | undefined): void => {
    if (record === undefined || record.expiresAtMs <= deps.now()) return deny(ctx, deps.settings);
    answerEmpty(ctx, grant(record));
  };
  return {
    fromMemory(req) {
      const known = deps.tokens.recall(readSessionCookie(req.headers));
      return servable(known) ? grant(known) : undefined;
    },
    middleware(ctx) {
      const tokenId = readSessionCookie(ctx.req.headers);
      const known = deps.tokens.recall(tokenId);
      if (servable(known)) return answerEmpty(ctx, grant(known));
      return (known === undefined ? deps.tokens.get(tokenId) : Promise.resolve(known))
        .then((record) => deps.sessions.current(tokenId, record))
        .then((record) => answer(ctx, record));
    },
  };
}
