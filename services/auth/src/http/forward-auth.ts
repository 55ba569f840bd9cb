import type Koa from 'koa';
import { unauthorized } from '@sp/core';
import { answerEmpty, type DirectRoute } from '@sp/http';
import { readSessionCookie } from '../sessions/session-cookie.js';
import type { TokenRecord } from '../sessions/token-store.js';
import type { AuthServices } from '../services.js';

/** What forwardAuth uses. */
export type ForwardAuthDeps = Pick<AuthServices, 'tokens' | 'sessions' | 'now'>;

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
 * GET /auth, the forward-auth endpoint of an ingress or the GraphQL gateway (like
 * oauth2-proxy's): 200 with `Authorization: Bearer <access token>` when the TokenId cookie maps
 * to a live session, 401 otherwise; the session's access token is renewed before it expires
 * (503 when it has expired and cannot be renewed now). The hot path of every authenticated
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
    if (headers === undefined) grants.set(record, (headers = ['Authorization', `Bearer ${record.accessToken}`]));
    return headers;
  };
  // A session the near cache holds and that is not yet due for renewal is answered at once: no
  // promise, no cache call. `renewAtMs` never lies past the token's expiry, so this one comparison
  // is also the expiry check. Revocation is the token store's: `recall` refuses a token id this
  // replica removed, and the near cache drops what any replica changed.
  const servable = (known: TokenRecord | undefined): known is TokenRecord => known !== undefined && known.renewAtMs > deps.now();

  // Never an expired token: a session whose token has expired is renewed first (session-keeper.ts).
  const answer = (ctx: Koa.Context, record: TokenRecord | undefined): void => {
    if (record === undefined || record.expiresAtMs <= deps.now()) throw unauthorized();
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
