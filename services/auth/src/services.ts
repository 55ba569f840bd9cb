import type { CacheClient } from '@sp/cache-client';
import type { Logger } from '@sp/observability';
import type { EventPublisher } from '@sp/messaging';
import type { AuthMetrics } from './auth-metrics.js';
import type { AuthConfig } from './config.js';
import type { IdentityProvider } from './oidc/identity-provider.js';
import type { CompleteLogin } from './sessions/login-completion.js';
import type { VerifyLogoutToken } from './oidc/logout-token.js';
import type { OtpStore } from './otp/otp-store.js';
import type { OtpRateLimiter } from './otp/rate-limiter.js';
import type { SessionKeeper } from './sessions/session-keeper.js';
import type { SessionMetrics } from './sessions/session-metrics.js';
import type { TokenStore } from './sessions/token-store.js';
import type { UserDirectory } from './users/user-directory.js';
import type { UserSessions } from './sessions/user-sessions.js';

/** The part of the configuration the endpoints read. */
export type AuthSettings = Pick<AuthConfig, 'publicBaseUrl' | 'allowedRedirects' | 'identityHeaders' | 'signInPageUrl' | 'proxyHops' | 'session' | 'environment' | 'groups' | 'locales' | 'otp' | 'otpFraud' | 'kafka'> & {
  oidc: Pick<AuthConfig['oidc'], 'stateTtlSeconds' | 'timeoutMs' | 'issuer' | 'clientId' | 'backchannelLogoutMaxAgeSeconds'>;
};

/**
 * What the endpoints share, built once by the composition root (auth.ts). Each endpoint takes
 * the few of these it uses (its `…Deps` type, a Pick of this one).
 */
export interface AuthServices {
  settings: AuthSettings;
  /** The cache service (JSON values). */
  cache: CacheClient<unknown>;
  publisher: EventPublisher;
  identityProvider: IdentityProvider;
  users: UserDirectory;
  logger: Logger;
  /** The clock, Unix ms. */
  now: () => number;
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
