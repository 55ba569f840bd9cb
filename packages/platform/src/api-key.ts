import type Koa from 'koa';
import { createSecretMatcher, unauthorized } from '@sp/platform';

/** Rejects with 401 `{"error":"unauthorized"}` unless X-Api-Key holds one of the keys (constant-time). */
export function requireApiKey(keys: readonly string[]): Koa.Middleware {
  const matches = createSecretMatcher(keys);
  return (ctx, next) => {
    const header = ctx.request.headers['x-api-key'];
    if (!matches(typeof header === 'string' ? header : undefined)) throw unauthorized();
    return next();
  };
}
