import type Koa from 'koa';
import { unauthorized } from '@sp/platform';
import { readSessionCookie } from './session-cookie.js';
import type { TokenRecord } from './token-store.js';
import type { AuthServices } from './services.js';

/** What forwardAuth uses. */
export type ForwardAuthDeps = Pick<AuthServices, 'tokens' | 'sessions' | 'now'>;

/**
 * GET /auth, the forward-auth endpoint of an ingress or the GraphQL gateway (like
 * oauth2-proxy's): 200 with `Authorization: Bearer <access token>` when the TokenId cookie maps
 * to a live session, 401 otherwise; the session's access token is renewed before it expires
 * (503 when it has expired and cannot be renewed now). The hot path of every authenticated
 * request: no cache call for a session the near cache holds, one read otherwise.
 */
export function forwardAuth(deps: ForwardAuthDeps): Koa.Middleware {
  // The header value of each record the near cache holds, built once: GET /auth runs on every
  // authenticated request, and the ~1.4 KB string would otherwise be built and scanned each time.
  // Keyed by the record object (one per stored buffer: memoizedJsonSerializer), so it goes when
  // the near cache drops the record.
  const headerValues = new WeakMap<TokenRecord, string>();
  const authorization = (record: TokenRecord): string => {
    let value = headerValues.get(record);
    if (value === undefined) headerValues.set(record, (value = `Bearer ${record.accessToken}`));
    return value;
  };
  // Straight to Node's setHeader and the request's own headers (Koa documents ctx.req and ctx.res):
  // Koa's delegating accessors add calls to every request and nothing this path needs.
  const grant = (ctx: Koa.Context, record: TokenRecord): void => {
    ctx.res.setHeader('Authorization', authorization(record));
    ctx.body = '';
  };
  // Never an expired token: a session whose token has expired is renewed first (session-keeper.ts).
  const answer = (ctx: Koa.Context, record: TokenRecord | undefined): void => {
    if (record === undefined || record.expiresAtMs <= deps.now()) throw unauthorized();
    grant(ctx, record);
  };
  // A session the near cache holds and that is not yet due for renewal is answered synchronously:
  // no promise, no await on the path that most requests take (bench/auth.bench.ts). `renewAtMs`
  // never lies past the token's expiry, so this one comparison is also the expiry check.
  return (ctx) => {
    const tokenId = readSessionCookie(ctx.req.headers);
    const known = deps.tokens.recall(tokenId);
    if (known !== undefined && known.renewAtMs > deps.now()) return grant(ctx, known);
    return (known === undefined ? deps.tokens.get(tokenId) : Promise.resolve(known))
      .then((record) => deps.sessions.current(tokenId, record))
      .then((record) => answer(ctx, record));
  };
}
