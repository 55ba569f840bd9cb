import type Koa from 'koa';
import { createHttpApp, notFound, type Registry } from '@sp/platform';
import { parameterRoutes, routeTable } from './router.js';
import type { AuthServices } from './services.js';

/**
 * Headers on every answer: nothing here may be cached (tokens, cookies, codes); no MIME
 * sniffing; and no Referer, so the code and state in /redirect's URL never reach the next site.
 */
const SECURITY_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

/**
 * The auth service's HTTP app (served over HTTPS by server.ts). Behind a proxy
 * (`Auth__TrustProxy`) the client IP is taken from X-Forwarded-For, counting `Auth__ProxyHops`
 * entries from the right: the ones the trusted proxies appended, never what the client sent.
 */
export function createAuthApp(services: AuthServices, registry: Registry): Koa {
  const { proxyHops } = services.settings;
  const app = createHttpApp({ logger: services.logger, registry, proxy: proxyHops > 0, headers: SECURITY_HEADERS, routes: routeTable(services) });
  app.maxIpsCount = proxyHops;
  app.use(parameterRoutes(services));
  app.use(() => {
    throw notFound();
  });
  return app;
}
