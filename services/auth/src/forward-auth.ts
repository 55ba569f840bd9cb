import type Koa from 'koa';
import { unauthorized } from '@sp/platform';
import { readSessionCookie } from './session-cookie.js';
import type { AuthServices } from './services.js';

/**
 * GET /auth, the forward-auth endpoint of an ingress or the GraphQL gateway (like
 * oauth2-proxy's): 200 with `Authorization: Bearer <access token>` when the TokenId cookie maps
 * to a live token, 401 otherwise. The hot path of every authenticated request: one cache read.
 */
export function forwardAuth(s: AuthServices): Koa.Middleware {
  return async (ctx) => {
    const record = await s.tokens.get(readSessionCookie(ctx.headers));
    if (record === undefined || record.expiresAtMs <= s.now()) throw unauthorized();
    ctx.set('Authorization', `Bearer ${record.accessToken}`);
    ctx.body = '';
  };
}
