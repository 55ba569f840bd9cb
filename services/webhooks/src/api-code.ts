import type Koa from 'koa';
import { unauthorized } from '@sp/core';
import { createSecretMatcher } from '@sp/identity';

/**
 * Rejects with 401 `{"error":"unauthorized"}` unless the query parameter `code` holds one of the
 * keys (WEBHOOKS_API_KEY), compared in constant time. Runs before the body is read, so a caller
 * without the key causes nothing.
 */
export function requireCode(keys: readonly string[]): Koa.Middleware {
  const matches = createSecretMatcher(keys);
  return (ctx, next) => {
    const code = ctx.query.code;
    if (!matches(typeof code === 'string' ? code : undefined)) throw unauthorized();
    return next();
  };
}
