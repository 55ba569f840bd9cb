import type Koa from 'koa';
import { AppError } from '@sp/platform';

type Method = 'GET' | 'POST';

/**
 * One path's handlers by HTTP method. HEAD is answered by the GET handler (Koa drops the body);
 * any other method gets 405 `{"error":"method not allowed"}` with an Allow header.
 */
export function byMethod(handlers: Partial<Record<Method, Koa.Middleware>>): Koa.Middleware {
  const table = new Map<string, Koa.Middleware>(Object.entries(handlers));
  const get = table.get('GET');
  if (get !== undefined) table.set('HEAD', get);
  const allow = [...table.keys()].join(', ');
  return (ctx, next) => {
    const handler = table.get(ctx.method);
    if (handler === undefined) throw new AppError(405, 'method_not_allowed', 'method not allowed', { headers: { Allow: allow } });
    return handler(ctx, next) as Promise<void>;
  };
}
