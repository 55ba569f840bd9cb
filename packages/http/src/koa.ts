import type { RequestListener } from 'node:http';
import Koa from 'koa';
import getRawBody from 'raw-body';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { payloadTooLarge, toAppError, unsupportedMediaType, type AppError } from '@sp/core';
import { directListener, type DirectRoute } from './direct-routes.js';
import { createRequestMetrics } from '@sp/observability';

/**
 * Answers an error as one JSON body `{"error": message}` (with `"reason"` when the error names
 * one) with the error's status and headers.
 * Unexposed (5xx) errors are logged with their cause and answered with a generic message, except
 * refusals that carry a reason.
 */
function answerError(ctx: Koa.Context, err: unknown, logger: Logger): void {
  const appError = toAppError(err);
  // A 5xx with a reason is a refusal the service decided (a budget spent), not a failure: the service logs it its own way.
  if (appError.status >= 500 && appError.reason === undefined) logger.error({ err: appError.cause ?? err, method: ctx.method, path: ctx.path }, appError.message);
  ctx.status = appError.status;
  ctx.set(appError.headers);
  ctx.body = appError.reason === undefined ? { error: appError.message } : { error: appError.message, reason: appError.reason };
}

/**
 * The route template @koa/router recorded in its documented `ctx.routerPath` (never the raw path,
 * which would explode cardinality).
 */
function matchedRoute(ctx: Koa.ParameterizedContext<Koa.DefaultState, { routerPath?: string }>): string {
  return ctx.routerPath ?? 'unmatched';
}

export interface HttpAppOptions {
  logger: Logger;
  registry: Registry;
  /** Trust X-Forwarded-* (behind an ingress). */
  proxy?: boolean;
  /** Headers set on every answer, errors included (e.g. security headers). */
  headers?: Readonly<Record<string, string>>;
  /**
   * Handlers by exact path, for an API of fixed paths: the front middleware dispatches them itself
   * and the path is their route label. A path not listed goes on to the middleware the service
   * adds (@koa/router's routes are labelled by their template).
   */
  routes?: ReadonlyMap<string, Koa.Middleware>;
}

export interface HttpServiceOptions extends HttpAppOptions {
  /** GET routes tried before Koa, by exact path (a query string is allowed, as Koa's `ctx.path` ignores it). */
  directRoutes?: ReadonlyMap<string, DirectRoute>;
}

export interface HttpService {
  /** The Koa app: the platform's front middleware, then what the service adds. */
  app: Koa;
  /** The request listener to serve: the direct routes, then the app for everything they leave. */
  listener: RequestListener;
}

/**
 * A Koa app with the platform's front middleware before the service's routes. It sets
 * `headers` on every answer, dispatches `routes`, turns every error into a JSON answer
 * (`answerError`), and counts every request in the RED metrics (http_requests_total,
 * http_request_duration_seconds) by method, route template and status. One middleware and a
 * promise chain rather than a middleware for each, since it wraps every request: each Koa
 * middleware level costs on the hot path (bench/auth.bench.ts).
 */
export function createHttpApp(options: HttpAppOptions): Koa {
  return createHttpService(options).app;
}

/**
 * `createHttpApp`'s app, and a request listener that first offers a GET of a `directRoutes` path to
 * its route: an answer the route knows from memory is written straight to Node's response, with
 * the app's `headers`, counted in the same request metrics under the same labels, without Koa's
 * per-request context, promise chain and response handling (bench/auth.bench.ts: GET /auth). While
 * a trace is active (`Otlp__Endpoint`), requests go through Koa as before, so traces keep their
 * Koa spans.
 */
export function createHttpService(options: HttpServiceOptions): HttpService {
  const app = new Koa({ proxy: options.proxy ?? false });
  app.silent = true;
  const record = createRequestMetrics(options.registry);
  const headers = Object.entries(options.headers ?? {});
  const routes = options.routes;
  app.use((ctx, next) => {
    const started = performance.now();
    for (const [name, value] of headers) ctx.res.setHeader(name, value);
    const route = routes?.get(ctx.path);
    const done = (): void => record(ctx.method, route === undefined ? matchedRoute(ctx) : ctx.path, ctx.status, (performance.now() - started) / 1000);
    const fail = (err: unknown): void => {
      answerError(ctx, err, options.logger);
      done();
    };
    try {
      // A route may answer synchronously (a plain value) or throw before returning a promise.
      return Promise.resolve(route === undefined ? next() : route(ctx, next)).then(done, fail);
    } catch (err) {
      fail(err);
      return Promise.resolve();
    }
  });
  // Koa composes its middleware when asked for its callback: at the first request, once the
  // service has added its own.
  let handle: RequestListener | undefined;
  const koa: RequestListener = (req, res) => (handle ??= requestListener(app))(req, res);
  const direct = options.directRoutes;
  const listener = direct === undefined || direct.size === 0 ? koa : directListener(koa, direct, headers.flat(), record);
  return { app, listener };
}

/**
 * A Koa app as the request listener of a Node HTTP or HTTPS server. Koa settles the promise it
 * returns itself (errors go through its own error handling), so there is nothing to await here.
 */
export function requestListener(app: Koa): RequestListener {
  const handle = app.callback();
  return (req, res) => void handle(req, res);
}

/**
 * Reads the request body as a Buffer. The checks come in the documented order of every service:
 * the media type first (415, whatever the size: a body of the wrong type is refused for what it
 * is), then the size, declared or while streaming (413 before the whole body is buffered).
 */
export async function readBody(ctx: Koa.Context, options: { limitBytes: number; types: readonly string[] }): Promise<Buffer> {
  if (!ctx.is(...options.types)) {
    ctx.req.resume();
    throw unsupportedMediaType(options.types);
  }
  if (ctx.request.length !== undefined && ctx.request.length > options.limitBytes) {
    throw tooLarge(ctx, options.limitBytes);
  }
  try {
    return await getRawBody(ctx.req, { limit: options.limitBytes, length: ctx.request.length });
  } catch (err) {
    if (err instanceof Error && 'type' in err && err.type === 'entity.too.large') throw tooLarge(ctx, options.limitBytes);
    throw err;
  }
}

/**
 * The 413 for a body over the limit. The rest of the body is drained (read and discarded, never
 * buffered): a body stopped mid-stream is left paused half-read, and the next request on the
 * keep-alive connection would never be parsed. A refused media type is drained the same way.
 */
function tooLarge(ctx: Koa.Context, limitBytes: number): AppError {
  ctx.req.resume();
  return payloadTooLarge(limitBytes);
}
