import type Koa from 'koa';
import { unauthorized } from '@sp/platform';
import { readSessionCookie } from './session-cookie.js';
import type { TokenRecord } from './token-store.js';
import type { AuthServices } from './services.js';

/**
 * GET /auth, the forward-auth endpoint of an ingress or the GraphQL gateway (like
 * oauth2-proxy's): 200 with `Authorization: Bearer <access token>` when the TokenId cookie maps
 * to a live token, 401 otherwise. The hot path of every authenticated request: one cache read.
 */
export function forwardAuth(s: AuthServices): Koa.Middleware {
  // The header value of each record this replica remembers, built once: building the ~1.4 KB
  // string per request (and Node then flattening and scanning it) measured ~1.5 µs of GET /auth.
  // Keyed by the record object, so it goes when the token store forgets the record.
  const headerValues = new WeakMap<TokenRecord, string>();
  const authorization = (record: TokenRecord): string => {
    let value = headerValues.get(record);
    if (value === undefined) headerValues.set(record, (value = `Bearer ${record.accessToken}`));
    return value;
  };
  const answer = (ctx: Koa.Context, record: TokenRecord | undefined): void => {
    if (record === undefined || record.expiresAtMs <= s.now()) throw unauthorized();
    ctx.set('Authorization', authorization(record));
    ctx.body = '';
  };
  // A token this replica remembers is answered synchronously: no promise, no await on the path
  // that most requests take (bench/auth.bench.ts).
  return (ctx) => {
    const tokenId = readSessionCookie(ctx.headers);
    const known = s.tokens.recall(tokenId);
    if (known !== undefined) return answer(ctx, known);
    return s.tokens.get(tokenId).then((record) => answer(ctx, record));
  };
}
