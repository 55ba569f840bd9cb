import { createCacheClient, jsonSerializer, type CacheClient } from '@sp/cache-client';
import { createKafkaPublisher, createOidcTokenClient, type EventPublisher, type Logger, type Registry } from '@sp/platform';
import type { AuthConfig } from './config.js';
import { createIdpHttp } from './idp-http.js';
import type { IdentityProvider } from './identity-provider.js';
import { createKeycloakAdmin } from './keycloak-admin.js';
import { createKeycloakOidc } from './keycloak-oidc.js';
import type { UserDirectory } from './user-directory.js';

export interface AuthAdapters {
  cache: CacheClient<unknown>;
  publisher: EventPublisher;
  identityProvider: IdentityProvider;
  users: UserDirectory;
  /** Flushes and closes them all (shutdown). */
  close(): Promise<void>;
}

/** The real backends, as configured: cache service (gRPC), Kafka, Keycloak (OIDC and admin API). */
export function createAuthAdapters(config: Pick<AuthConfig, 'cache' | 'kafka' | 'oidc' | 'publicBaseUrl'>, deps: { logger: Logger; registry: Registry; now?: () => number }): AuthAdapters {
  const cache = createCacheClient<unknown>({ address: config.cache.address, deadlineMs: config.cache.deadlineMs }, jsonSerializer);
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
    async close() {
      await publisher.close();
      cache.close();
      await http.close();
    },
  };
}
