import type { RequestListener } from 'node:http';
import { createAuthServer } from './server.js';
import { loadTlsCredentials } from './tls.js';
import type Koa from 'koa';
import { createCacheClient, memoizedJsonSerializer, type CacheClient } from '@sp/cache-client';
import type { Logger, Registry } from '@sp/observability';
import { httpApi, type ReadinessCheck, type ServedApi } from '@sp/http';
import { createKafkaPublisher, type EventPublisher } from '@sp/messaging';
import { createAuthApp } from './app.js';
import { createAuthMetrics } from './auth-metrics.js';
import type { AuthConfig } from './config.js';
import { createKeycloak } from './keycloak.js';
import { createLoginCompletion } from './sessions/login-completion.js';
import { createLogoutTokenVerifier } from './oidc/logout-token.js';
import { createOtpStore } from './otp/otp-store.js';
import { createOtpRateLimiter } from './otp/rate-limiter.js';
import type { AuthServices } from './services.js';
import { createSessionIndex } from './sessions/session-index.js';
import { createSessionKeeper } from './sessions/session-keeper.js';
import { createSessionMetrics } from './sessions/session-metrics.js';
import { createSessionPolicy } from './sessions/session-policy.js';
import { createTokenStore, SESSION_KEY_PREFIX } from './sessions/token-store.js';
import { createUserSessions } from './sessions/user-sessions.js';

export interface AuthRuntime {
  logger: Logger;
  registry: Registry;
  /** The clock, Unix ms (Date.now unless a test moves time itself: test/support/test-clock.ts). */
  now?: () => number;
}

/** Adapters a test brings itself instead of those the configuration names; the test closes them. */
export interface AuthOverrides {
  /** The cache service's client (JSON values) instead of `Cache__Url`'s with its near cache of sessions. */
  cache?: CacheClient<unknown>;
  /** The event publisher instead of a Kafka producer on `MessageBroker__BrokerList`. */
  publisher?: EventPublisher;
}

export interface Auth {
  /** What main.ts serves (serveService): the app over HTTPS on `port`, with the configured certificate (read when serving starts). */
  api: ServedApi<number>;
  /** What /readyz checks: the cache service, the Kafka broker and Keycloak's discovery document. */
  readiness: ReadinessCheck[];
  /** Flushes Kafka and closes the cache client and the Keycloak pool it created (shutdown). */
  close(): Promise<void>;
}

/** The service and the parts the root wired it from, for tests that drive a part below HTTP. */
export interface AuthParts extends Auth {
  /** The HTTP app (Koa), for tests that compare it with `listener`. */
  app: Koa;
  /** What `api` serves, over HTTPS (server.ts): GET /auth of a session held in memory, then the app. */
  listener: RequestListener;
  /** What the endpoints share: for tests that drive a piece (the session index, provisioning) below HTTP. */
  services: AuthServices;
}

/**
 * The auth service's composition root: the adapters the configuration names (the cache service
 * over gRPC, Kafka, Keycloak through openid-client and its admin client) or a test's overrides,
 * what the endpoints share on them, and the HTTP app. main.ts builds the service through it;
 * nothing here listens.
 */
export function createAuth(config: AuthConfig, runtime: AuthRuntime, overrides: AuthOverrides = {}): Auth {
  const parts = wireAuth(config, runtime, overrides);
  return { api: parts.api, readiness: parts.readiness, close: () => parts.close() };
}

/** What createAuth does, keeping the parts: the tests build the service through it. */
export function wireAuth(config: AuthConfig, runtime: AuthRuntime, overrides: AuthOverrides = {}): AuthParts {
  const { logger, registry } = runtime;
  const now = runtime.now ?? Date.now;
  for (const warning of config.warnings) logger.warn(warning);
  if (config.allowedRedirects.entries.length === 0) logger.warn('Auth__AllowedRedirectUris is empty: every GET /login is refused with 400');

  const cache = overrides.cache ?? sessionCachingClient(config);
  const publisher = overrides.publisher ?? kafkaPublisher(config, runtime);
  const keycloak = createKeycloak(config, runtime.now);
  const { identityProvider } = keycloak;

  // Sessions: records in the cache service, renewed under a lock, indexed per user.
  // Without an injected clock, the token store ages its removal marks by a monotonic one.
  const tokens = createTokenStore(cache, runtime.now === undefined ? {} : { now: runtime.now });
  const policy = createSessionPolicy(config.session);
  const sessionMetrics = createSessionMetrics(registry);
  const sessions = createSessionKeeper({
    cache,
    tokens,
    identityProvider,
    policy,
    logger,
    now,
    // One renewal is one call to Keycloak (Oidc__TimeoutMs) and a few to the cache service.
    lockTtlMs: config.oidc.timeoutMs + 2000,
    onRenewal: sessionMetrics.renewal,
  });
  const index = createSessionIndex(cache, { slots: config.session.maxPerUser, exists: async (tokenId) => (await tokens.read(tokenId)) !== undefined });
  const userSessions = createUserSessions({ cache, tokens, index, sessions, identityProvider, logger, onEnded: sessionMetrics.ended });

  const services: AuthServices = {
    settings: config,
    cache,
    publisher,
    identityProvider,
    users: keycloak.users,
    logger,
    now,
    metrics: createAuthMetrics(registry),
    otps: createOtpStore(cache, config.otp),
    limiter: createOtpRateLimiter(cache, { ...config.otp, ...config.otpFraud }, { now, logger }),
    tokens,
    sessions,
    userSessions,
    sessionMetrics,
    verifyLogoutToken: createLogoutTokenVerifier(
      { issuer: config.oidc.issuer, clientId: config.oidc.clientId, maxAgeSeconds: config.oidc.backchannelLogoutMaxAgeSeconds },
      { jwksUri: () => identityProvider.jwksUri(), fetch: keycloak.fetch, cache, timeoutMs: config.oidc.timeoutMs },
    ),
    completeLogin: createLoginCompletion({ tokens, userSessions, policy, publisher, topic: config.kafka.userAuthenticationTopic, logger, now }),
  };

  const { app, listener } = createAuthApp(services, registry);
  return {
    api: httpApi(async () => createAuthServer(listener, await loadTlsCredentials(config, logger)), config),
    app,
    listener,
    services,
    readiness: [
      {
        name: 'cache',
        check: async () => {
          await cache.get('readiness:auth');
        },
      },
      { name: 'kafka', check: () => publisher.check() },
      { name: 'keycloak', check: () => identityProvider.check() },
    ],
    async close() {
      if (overrides.publisher === undefined) await publisher.close();
      if (overrides.cache === undefined) cache.close();
      await keycloak.close();
    },
  };
}

/** The Kafka producer of the two events the service publishes, on `MessageBroker__BrokerList`. */
function kafkaPublisher(config: Pick<AuthConfig, 'kafka'>, runtime: Pick<AuthRuntime, 'logger' | 'registry'>): EventPublisher {
  const { kafka } = config;
  return createKafkaPublisher({
    brokers: kafka.brokers,
    clientId: 'auth',
    source: '/subscription-platform/auth',
    logger: runtime.logger,
    registry: runtime.registry,
    publishTimeoutMs: kafka.publishTimeoutMs,
    events: [
      { topic: kafka.notificationsTopic, type: 'SendSmsNotificationEvent' },
      { topic: kafka.userAuthenticationTopic, type: 'UserLoggedInEvent' },
    ],
  });
}

/**
 * The client of the cache service at `Cache__Url`. Sessions (token:{tokenId}) are read on every
 * GET /auth: from memory while the cache service's invalidation stream vouches for them, through
 * to the service otherwise.
 */
function sessionCachingClient(config: Pick<AuthConfig, 'cache' | 'session'>): CacheClient<unknown> {
  return createCacheClient<unknown>(
    {
      address: config.cache.address,
      deadlineMs: config.cache.deadlineMs,
      ...(config.session.nearCacheEntries > 0 ? { nearCache: { prefixes: [SESSION_KEY_PREFIX], maxEntries: config.session.nearCacheEntries } } : {}),
    },
    // Session records are never changed in place, so a near-cache hit may hand out the object parsed before.
    memoizedJsonSerializer(),
  );
}
