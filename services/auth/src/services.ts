import type { CacheClient } from '@sp/cache-client';
import type { EventPublisher, Logger, Registry } from '@sp/platform';
import type { AuthConfig } from './config.js';
import { createAuthMetrics, type AuthMetrics } from './auth-metrics.js';
import type { IdentityProvider } from './identity-provider.js';
import type { UserDirectory } from './user-directory.js';
import { createLoginCompletion, type CompleteLogin } from './login-completion.js';
import { createOtpStore, type OtpStore } from './otp-store.js';
import { createOtpRateLimiter, type OtpRateLimiter } from './rate-limiter.js';
import { createSessionKeeper, type SessionKeeper } from './session-keeper.js';
import { createSessionMetrics } from './session-metrics.js';
import { createSessionPolicy } from './session-policy.js';
import { createTokenStore, type TokenStore } from './token-store.js';

/** The part of the configuration the HTTP app uses. */
export type AuthSettings = Pick<AuthConfig, 'publicBaseUrl' | 'allowedRedirects' | 'proxyHops' | 'sessionCacheMs' | 'session' | 'environment' | 'groups' | 'locales' | 'otp' | 'otpFraud' | 'kafka'> & {
  oidc: Pick<AuthConfig['oidc'], 'stateTtlSeconds' | 'timeoutMs'>;
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
  completeLogin: CompleteLogin;
}

export function createAuthServices(deps: AuthDeps): AuthServices {
  const now = deps.now ?? Date.now;
  const metrics = createAuthMetrics(deps.registry);
  const tokens = createTokenStore(deps.cache, { localTtlMs: deps.settings.sessionCacheMs, ...(deps.now === undefined ? {} : { now: deps.now }) });
  const sessionPolicy = createSessionPolicy(deps.settings.session);
  // One renewal is one call to Keycloak (Oidc__TimeoutMs) and a few to the cache service.
  const lockTtlMs = deps.settings.oidc.timeoutMs + 2000;
  return {
    ...deps,
    now,
    metrics,
    otps: createOtpStore(deps.cache, deps.settings.otp),
    limiter: createOtpRateLimiter(deps.cache, { ...deps.settings.otp, ...deps.settings.otpFraud }, { now, logger: deps.logger }),
    tokens,
    sessions: createSessionKeeper({
      cache: deps.cache,
      tokens,
      identityProvider: deps.identityProvider,
      policy: sessionPolicy,
      logger: deps.logger,
      now,
      lockTtlMs,
      onRenewal: createSessionMetrics(deps.registry),
    }),
    completeLogin: createLoginCompletion({
      tokens,
      policy: sessionPolicy,
      publisher: deps.publisher,
      identityProvider: deps.identityProvider,
      topic: deps.settings.kafka.userAuthenticationTopic,
      logger: deps.logger,
      now,
    }),
  };
}
