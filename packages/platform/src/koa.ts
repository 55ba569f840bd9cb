import Koa from 'koa';
import getRawBody from 'raw-body';
import { Counter, Histogram, type Registry } from 'prom-client';
import type { Logger } from 'pino';
import { payloadTooLarge, toAppError, unsupportedMediaType, type AppError } from './errors.js';

/**
 * Maps every error to one JSON answer `{"error": message}` with the error's status and headers.
 * Unexposed (5xx) errors are logged with their cause and answered with a generic message.
 */
export function errorHandler(logger: Logger): Koa.Middleware {
  // A promise chain rather than an async function: this wraps every request.
  return (ctx, next) =>
    next().catch((err: unknown) => {
      const appError = toAppError(err);
      if (appError.status >= 500) logger.error({ err: appError.cause ?? err, method: ctx.method, path: ctx.path }, appError.message);
      ctx.status = appError.status;
      ctx.set(appError.headers);
      ctx.body = { error: appError.message };
    });
}

/** RED metrics by route template (never by raw path, which would explode cardinality). */
export function httpMetrics(registry: Registry): Koa.Middleware {
  const labelNames = ['method', 'route', 'status'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'HTTP requests handled', labelNames, registers: [registry] });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  return (ctx, next) => {
    const end = duration.startTimer();
    const record = (): void => {
      const state = ctx as unknown as { _matchedRoute?: string; routePath?: string };
      const labels = { method: ctx.method, route: state._matchedRoute ?? state.routePath ?? 'unmatched', status: String(ctx.status) };
      requests.inc(labels);
      end(labels);
    };
    return next().then(record, (err: unknown) => {
      record();
      throw err;
    });
  };
}

export interface HttpAppOptions {
  logger: Logger;
  registry: Registry;
  /** Trust X-Forwarded-* (behind an ingress). */
  proxy?: boolean;
}

/** A Koa app with the platform's error mapping and metrics in front of the service's routes. */
export function createHttpApp(options: HttpAppOptions): Koa {
  const app = new Koa({ proxy: options.proxy ?? false });
  app.silent = true;
  app.use(httpMetrics(options.registry));
  app.use(errorHandler(options.logger));
  return app;
}

/**
 * Reads the request body as a Buffer after checking its media type, enforcing a size limit
 * while streaming (413 before the whole body is buffered).
 */
export async function readBody(ctx: Koa.Context, options: { limitBytes: number; types: readonly string[] }): Promise<Buffer> {
  if (ctx.request.length !== undefined && ctx.request.length > options.limitBytes) {
    throw tooLarge(ctx, options.limitBytes);
  }
  if (!ctx.is(...options.types)) throw unsupportedMediaType(options.types);
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
 * keep-alive connection would never be parsed.
 */
function tooLarge(ctx: Koa.Context, limitBytes: number): AppError {
  ctx.req.resume();
  return payloadTooLarge(limitBytes);
}
