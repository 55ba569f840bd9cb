import type Koa from 'koa';
import { AppError } from '@sp/core';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A Koa middleware over any context (a plain Koa context, a router's, …). */
type Handler<C> = (ctx: C, next: Koa.Next) => unknown;

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'];
const order = (method: string): number => ORDER.indexOf(method);

/**
 * One path's handlers by HTTP method, so a router matches a path once whatever the method.
 * HEAD is answered by the GET handler (Koa drops the body); any other method gets 405
 * `{"error":"method not allowed"}` with an Allow header listing what the path accepts.
 */
export function byMethod<C extends { method: string }>(handlers: Partial<Record<HttpMethod, Handler<C>>>): Handler<C> {
  const table = new Map<string, Handler<C>>(Object.entries(handlers));
  const get = table.get('GET');
  if (get !== undefined) table.set('HEAD', get);
  const allow = [...table.keys()].sort((a, b) => order(a) - order(b)).join(', ');
  const notAllowed: Handler<C> = () => {
    throw new AppError(405, 'method_not_allowed', 'method not allowed', { headers: { Allow: allow } });
  };
  return (ctx, next) => {
    const handler = table.get(ctx.method) ?? notAllowed;
    return handler(ctx, next);
  };
}
