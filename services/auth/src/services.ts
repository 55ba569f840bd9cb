import type { CacheClient } from '@sp/cache-client';
import type { EventPublisher, Logger, Registry } from '@sp/platform';
import type { AuthConfig } from './config.js';
import { createAuthMetrics, type AuthMetrics } from './auth-metrics.js';
import type { IdentityProvider } from './identity-provider.js';
import type { IdpFetch } from './idp-http.js';
import type { UserDirectory } from './user-directory.js';
import { createLoginCompletion, type CompleteLogin } from './login-completion.js';
import { createOtpStore, type OtpStore } from './otp-store.js';
import { createOtpRateLimiter, type OtpRateLimiter } from './rate-limiter.js';
import { createSessionKeeper, type SessionKeeper } from './session-keeper.js';
import { createSessionMetrics, type SessionMetrics } from './session-metrics.js';
import { createSessionPolicy } from './session-policy.js';
import { createLogoutTokenVerifier, type VerifyLogoutToken } from './logout-token.js';
import { createSessionIndex } from './session-index.js';
import { createTokenStore, type TokenStore } from './token-store.js';
import { createUserSessions, type UserSessions } from './user-sessions.js';

/** The part of the configuration the HTTP app uses. */
export type AuthSettings = Pick<AuthConfig, 'publicBaseUrl' | 'allowedRedirects' | 'proxyHops' | 'session' | 'environment' | 'groups' | 'locales' | 'otp' | 'otpFraud' | 'kafka'> & {
  oidc: Pick<AuthConfig['oidc'], 'stateTtlSeconds' | 'timeoutMs' | 'issuer' | 'clientId' | 'backchannelLogoutMaxAgeSeconds'>;
};

/** The adapters the app runs on: each a real backend in production and in the tests. */
export interface AuthDeps {
  settings: AuthSettings;
  /** The cache service (JSON values). */
  cache: CacheClient<unknown>;
  publisher: EventPublisher;
  identityProvider: IdentityProvider;
  users: UserDirectory;
  logger: Logger;
  registry: Registry;
  /** Calls to the identity provider (its connection pool), for what openid-client does not fetch itself: the JWKS. */
  idpFetch: IdpFetch;
  /** The clock, Unix ms. */
  now?: () => number;
}

/** What the endpoints share, built once per app. */
export interface AuthServices extends Required<Omit<AuthDeps, 'registry'>> {
  metrics: AuthMetrics;
  otps: OtpStore;
  limiter: OtpRateLimiter;
  tokens: TokenStore;
  sessions: SessionKeeper;
  userSessions: UserSessions;
  verifyLogoutToken: VerifyLogoutToken;
  sessionMetrics: SessionMetrics;
  completeLogin: CompleteLogin;
}

export function createAuthServices(deps: AuthDeps): AuthServices {
  const now = deps.now ?? Date.now;
  const metrics = createAuthMetrics(deps.registry);
  const tokens = createTokenStore(deps.cache, deps.now === undefined ? {} : { now: deps.now });
  const sessionPolicy = createSessionPolicy(deps.settings.session);
  // One renewal is one call to Keycloak (Oidc__TimeoutMs) and a few to the cache service.
  const lockTtlMs = deps.settings.oidc.timeoutMs + 2000;
  const sessionMetrics = createSessionMetrics(deps.registry);
  const sessions = createSessionKeeper({
    cache: deps.cache,
    tokens,
    identityProvider: deps.identityProvider,
    policy: sessionPolicy,
    logger: deps.logger,
    now,
    lockTtlMs,
    onRenewal: sessionMetrics.renewal,
  });
  const index = createSessionIndex(deps.cache, { slots: deps.settings.session.maxPerUser, exists: async (tokenId) => (await tokens.read(tokenId)) !== undefined });
  const userSessions = createUserSessions({ cache: deps.cache, tokens, index, sessions, identityProvider: deps.identityProvider, logger: deps.logger, onEnded: sessionMetrics.ended });
  return {
    ...deps,
    now,
    metrics,
    otps: createOtpStore(deps.cache, deps.settings.otp),
    limiter: createOtpRateLimiter(deps.cache, { ...deps.settings.otp, ...deps.settings.otpFraud }, { now, logger: deps.logger }),
    tokens,
    sessions,
    userSessions,
    sessionMetrics,
    verifyLogoutToken: createLogoutTokenVerifier(
      { issuer: deps.settings.oidc.issuer, clientId: deps.settings.oidc.clientId, maxAgeSeconds: deps.settings.oidc.backchannelLogoutMaxAgeSeconds },
      { jwksUri: () => deps.identityProvider.jwksUri(), fetch: deps.idpFetch, cache: deps.cache, timeoutMs: deps.settings.oidc.timeoutMs },
    ),
    completeLogin: createLoginCompletion({
      tokens,
      userSessions,
      policy: sessionPolicy,
      publisher: deps.publisher,
      topic: deps.settings.kafka.userAuthenticationTopic,
      logger: deps.logger,
      now,
    }),
  };
}
