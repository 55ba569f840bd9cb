import type { RouterMiddleware } from '@koa/router';
import { AppError } from '@sp/platform';

type Method = 'GET' | 'POST' | 'DELETE';

/**
 * One path's handlers by HTTP method, so the router matches a path once whatever the method.
 * HEAD is answered by the GET handler (Koa drops the body); any other method gets 405
 * `{"error":"method not allowed"}` with an Allow header listing what the path accepts.
 */
export function byMethod(handlers: Partial<Record<Method, RouterMiddleware>>): RouterMiddleware {
  const table = new Map<string, RouterMiddleware>(Object.entries(handlers));
  const get = table.get('GET');
  if (get !== undefined) table.set('HEAD', get);
  const allow = [...table.keys()].sort((a, b) => order(a) - order(b)).join(', ');
  const notAllowed: RouterMiddleware = () => {
    throw new AppError(405, 'method_not_allowed', 'method not allowed', { headers: { Allow: allow } });
  };
  return (ctx, next) => {
    const handler = table.get(ctx.method) ?? notAllowed;
    return handler(ctx, next) as unknown;
  };
}

const ORDER = ['GET', 'HEAD', 'POST', 'DELETE'];
const order = (method: string): number => ORDER.indexOf(method);
