import type Koa from 'koa';
import { unauthorized } from '@sp/core';
import { createSecretMatcher } from './secret-matcher.js';

/**
 * Rejects with 401 `{"error":"unauthorized"}` unless the header (`X-Api-Key` by default) holds one
 * of the keys, compared in constant time (several during a rotation: current and previous). Runs
 * before anything else of the route, so a caller without the key causes nothing.
 */
export function requireApiKey(keys: readonly string[], header = 'x-api-key'): Koa.Middleware {
  const matches = createSecretMatcher(keys);
  return (ctx, next) => {
    const value = ctx.request.headers[header];
    if (!matches(typeof value === 'string' ? value : undefined)) throw unauthorized();
    return next();
  };
}
