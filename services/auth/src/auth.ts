import type Koa from 'koa';
import type { Logger, ReadinessCheck, Registry } from '@sp/platform';
import { createAuthAdapters } from './adapters.js';
import { authReadiness, createAuthApp } from './app.js';
import type { AuthConfig } from './config.js';

export interface AuthRuntime {
  logger: Logger;
  registry: Registry;
  /** The clock, Unix ms (Date.now unless a test moves time itself). */
  now?: () => number;
}

export interface Auth {
  /** The HTTP app, to be served over HTTPS (server.ts) or behind a TLS-ending proxy. */
  app: Koa;
  /** What /readyz checks. */
  readiness: ReadinessCheck[];
  /** Flushes Kafka and closes the cache client and the Keycloak pool (shutdown). */
  close(): Promise<void>;
}

/**
 * The auth service's composition root: the real adapters as configured (cache service, Kafka,
 * Keycloak through openid-client and its admin client) and the HTTP app on them. main.ts and the
 * tests both build the service through it.
 */
export function createAuth(config: AuthConfig, runtime: AuthRuntime): Auth {
  const adapters = createAuthAdapters(config, runtime);
  return {
    app: createAuthApp({ settings: config, ...adapters, ...runtime }),
    readiness: authReadiness(adapters),
    close: () => adapters.close(),
  };
}
