import type Koa from 'koa';
import { createHttpApp, notFound, type ReadinessCheck } from '@sp/platform';
import { parameterRoutes, routeTable } from './router.js';
import { createAuthServices, type AuthDeps } from './services.js';

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
export function createAuthApp(deps: AuthDeps): Koa {
  const services = createAuthServices(deps);
  const app = createHttpApp({ logger: deps.logger, registry: deps.registry, proxy: deps.settings.proxyHops > 0, headers: SECURITY_HEADERS, routes: routeTable(services) });
  app.maxIpsCount = deps.settings.proxyHops;
  app.use(parameterRoutes(services));
  app.use(() => {
    throw notFound();
  });
  return app;
}

/** What /readyz checks: the cache service, the Kafka broker and Keycloak's discovery document. */
export function authReadiness(deps: Pick<AuthDeps, 'cache' | 'publisher' | 'identityProvider'>): ReadinessCheck[] {
  return [
    {
      name: 'cache',
      check: async () => {
        await deps.cache.get('readiness:auth');
      },
    },
    { name: 'kafka', check: () => deps.publisher.check() },
    { name: 'keycloak', check: () => deps.identityProvider.check() },
  ];
}
