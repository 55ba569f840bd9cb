import { notFound } from '@sp/core';
import type { Registry } from '@sp/observability';
import { createHttpService, type HttpService } from '@sp/http';
import { forwardAuth } from './http/forward-auth.js';
import { directRoutes, parameterRoutes, routeTable } from './router.js';
import type { AuthServices } from './services.js';

/**
 * Headers on every answer: nothing here may be cached (tokens, cookies, codes); no MIME
 * sniffing; and no Referer, so the code and state in /redirect's URL never reach the next site.
 */
const SECURITY_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

/**
 * The auth service's HTTP app and the request listener that serves it (over HTTPS: server.ts),
 * which answers GET /auth for a session held in memory before the app (router.ts,
 * `directRoutes`). Behind a proxy (`Auth__TrustProxy`) the client IP is taken from
 * X-Forwarded-For, counting `Auth__ProxyHops` entries from the right: the ones the trusted proxies
 * appended, never what the client sent.
 */
export function createAuthApp(services: AuthServices, registry: Registry): HttpService {
  const { proxyHops } = services.settings;
  const forward = forwardAuth(services);
  const service = createHttpService({
    logger: services.logger,
    registry,
    proxy: proxyHops > 0,
    headers: SECURITY_HEADERS,
    routes: routeTable(services, forward),
    directRoutes: directRoutes(forward),
  });
  const { app } = service;
  app.maxIpsCount = proxyHops;
  app.use(parameterRoutes(services));
  app.use(() => {
    throw notFound();
  });
  return service;
}
