import { createCacheClient, memoizedJsonSerializer, type CacheClient } from '@sp/cache-client';
import { createKafkaPublisher, createOidcTokenClient, type EventPublisher, type Logger, type Registry } from '@sp/platform';
import type { AuthConfig } from './config.js';
import { createIdpHttp, type IdpFetch } from './idp-http.js';
import type { IdentityProvider } from './identity-provider.js';
import { createKeycloakAdmin } from './keycloak-admin.js';
import { createKeycloakOidc } from './keycloak-oidc.js';
import { SESSION_KEY_PREFIX } from './token-store.js';
import type { UserDirectory } from './user-directory.js';

export interface AuthAdapters {
  cache: CacheClient<unknown>;
  publisher: EventPublisher;
  identityProvider: IdentityProvider;
  users: UserDirectory;
  /** The connection pool to the identity provider. */
  idpFetch: IdpFetch;
  /** Flushes and closes them all (shutdown). */
  close(): Promise<void>;
}

/** The real backends, as configured: cache service (gRPC), Kafka, Keycloak (OIDC and admin API). */
export function createAuthAdapters(config: Pick<AuthConfig, 'cache' | 'kafka' | 'oidc' | 'publicBaseUrl' | 'session'>, deps: { logger: Logger; registry: Registry; now?: () => number }): AuthAdapters {
  const cache = createCacheClient<unknown>(
    {
      address: config.cache.address,
      deadlineMs: config.cache.deadlineMs,
      // Sessions (token:{tokenId}) are read on every GET /auth: from memory while the cache
      // service's invalidation stream vouches for them, through to the service otherwise.
      ...(config.session.nearCacheEntries > 0 ? { nearCache: { prefixes: [SESSION_KEY_PREFIX], maxEntries: config.session.nearCacheEntries } } : {}),
    },
    // Session records are never changed in place, so a near-cache hit may hand out the object parsed before.
    memoizedJsonSerializer(),
  );
  const publisher = createKafkaPublisher({
    brokers: config.kafka.brokers,
    clientId: 'auth',
    source: '/subscription-platform/auth',
    logger: deps.logger,
    registry: deps.registry,
    publishTimeoutMs: config.kafka.publishTimeoutMs,
    events: [
      { topic: config.kafka.notificationsTopic, type: 'SendSmsNotificationEvent' },
      { topic: config.kafka.userAuthenticationTopic, type: 'UserLoggedInEvent' },
    ],
  });
  const http = createIdpHttp({ timeoutMs: config.oidc.timeoutMs, ignoreCertificateErrors: config.oidc.ignoreCertificateErrors });
  const adminTokens = createOidcTokenClient({
    issuer: config.oidc.issuer,
    grant: { type: 'password', clientId: 'admin-cli', username: config.oidc.adminUsername, password: config.oidc.adminPassword },
    timeoutMs: config.oidc.timeoutMs,
    allowInsecureHttp: config.oidc.allowInsecureHttp,
    fetch: http.fetch,
  });
  return {
    cache,
    publisher,
    identityProvider: createKeycloakOidc(config.oidc, { fetch: http.fetch, redirectUri: `${config.publicBaseUrl}/redirect`, ...(deps.now === undefined ? {} : { now: deps.now }) }),
    users: createKeycloakAdmin(config.oidc, { tokens: adminTokens, dispatcher: http.dispatcher }),
    idpFetch: http.fetch,
    async close() {
      await publisher.close();
      cache.close();
      await http.close();
    },
  };
}
