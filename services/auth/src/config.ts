import { accessSync, constants } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { env, isTrueFlag, operationsEnv, parseEnv, parsedBy, type Env } from '@sp/core';
import { keycloakIssuer } from '@sp/identity';
import { parseIdentityHeaders, type IdentityHeader } from './http/identity-headers.js';
import { parseAllowlist, type RedirectAllowlist } from './oidc/redirect-allowlist.js';
import { KNOWN_COUNTRIES, NON_GEOGRAPHIC, NUMBER_TYPES, type NumberType } from './otp/phone.js';

export type Role = 'client' | 'subscriber';

/** Limits of the one-time password flow; see README "Limits". */
export interface OtpLimits {
  /** Life of a code (the secret's cache TTL) and of its attempt tokens. */
  ttlSeconds: number;
  /** Wrong codes accepted per issued code; the next attempt fails even with the right code. */
  maxAttempts: number;
  /** Least time between two codes for one phone number. */
  cooldownSeconds: number;
  /** Codes per phone number within `windowSeconds`. */
  maxPerPhone: number;
  /** Codes per client IP (IPv6: per /64) within `windowSeconds`. */
  maxPerIp: number;
  windowSeconds: number;
}

// --- OTP fraud controls (issue #32): prefix velocity, country policy, number types, SMS budget ---

/** Controls against SMS pumping on POST /otp; see README "Fraud controls". */
export interface OtpFraudControls {
  /** National digits after the country code that make the prefix a number is counted under. */
  prefixDigits: number;
  /** Codes per prefix within OtpLimits.windowSeconds. */
  maxPerPrefix: number;
  /** Codes per minute for the whole platform, all replicas together. */
  maxPerMinute: number;
  /** ISO 3166-1 alpha-2 codes, `001` (numbers of no country) and `*` (every country). */
  allowedCountries: ReadonlySet<string>;
  blockedCountries: ReadonlySet<string>;
  /** Allowed, but every code sent there is counted and logged as risky. */
  monitoredCountries: ReadonlySet<string>;
  allowedNumberTypes: ReadonlySet<NumberType>;
}

/** The country codes of a list (any case, kept upper case) that the phone metadata knows; `*` where accepted. */
const countryCodes =
  (acceptsStar: boolean) =>
  (items: string[], ctx: z.RefinementCtx): Set<string> => {
    const codes = items.map((item) => item.toUpperCase());
    const unknown = codes.filter((code) => !KNOWN_COUNTRIES.has(code) && !(acceptsStar && code === '*'));
    if (unknown.length > 0) {
      ctx.addIssue({ code: 'custom', message: `unknown country ${unknown.join(', ')}: use ISO 3166-1 alpha-2 codes such as DE, 001 for numbers of no country${acceptsStar ? ', or *' : ''}` });
    }
    return new Set(codes);
  };

/** A monitored country that is never allowed is a mistake in the settings (over the raw values). */
function otpFraudProblems(input: Input): string[] {
  const list = (name: string): string[] => (input[name] ?? '').split(',').map((item) => item.trim().toUpperCase()).filter((item) => item !== '');
  const allowed = input.Otp__AllowedCountries === undefined ? ['*'] : list('Otp__AllowedCountries');
  const blocked = list('Otp__BlockedCountries');
  const never = list('Otp__MonitoredCountries').filter((code) => blocked.includes(code) || !(allowed.includes(code) || (allowed.includes('*') && code !== NON_GEOGRAPHIC)));
  return never.length > 0 ? [`Otp__MonitoredCountries: ${never.join(', ')} never get a code (blocked, or not in Otp__AllowedCountries)`] : [];
}

function otpFraudControls(vars: Vars): OtpFraudControls {
  return {
    prefixDigits: vars.Otp__PrefixDigits,
    maxPerPrefix: vars.Otp__MaxPerPrefix,
    maxPerMinute: vars.Otp__MaxPerMinute,
    allowedCountries: vars.Otp__AllowedCountries,
    blockedCountries: vars.Otp__BlockedCountries,
    monitoredCountries: vars.Otp__MonitoredCountries,
    allowedNumberTypes: vars.Otp__AllowedNumberTypes,
  };
}

// --- end of OTP fraud controls ---

/** Lifetimes of a login session (the TokenId cookie's server-side record); see README "Sessions". */
export interface SessionLifetimes {
  /** The session ends after this long without a GET /auth. */
  idleSeconds: number;
  /** The session ends this long after the login, however active. */
  maxSeconds: number;
  /** GET /auth renews the access token when it has less than this left (at most half its lifespan). */
  renewBeforeSeconds: number;
  /**
   * Most sessions a replica holds in its near cache (kept fresh by the cache service's
   * invalidations); 0 turns the near cache off: every GET /auth reads the cache service.
   */
  nearCacheEntries: number;
  /** Most live sessions of one user; a login past it ends the user's oldest. */
  maxPerUser: number;
}

export interface OidcSettings {
  /** `{Oidc__ServerUrl}/realms/{Oidc__Realm}`: the issuer, and where discovery starts. */
  issuer: string;
  serverUrl: string;
  realm: string;
  clientId: string;
  clientSecret: string;
  adminUsername: string;
  adminPassword: string;
  /** Plain-HTTP identity provider allowed (loopback address, or outside Production). */
  allowInsecureHttp: boolean;
  /** IGNORE_SSL_CERT_VALIDATION, honoured only outside Production. */
  ignoreCertificateErrors: boolean;
  /** Life of a login's PKCE verifier (`oidc:{state}`). */
  stateTtlSeconds: number;
  /** Upper bound of one call to the identity provider. */
  timeoutMs: number;
  /** Oldest back-channel Logout Token accepted (by its `iat`), in seconds. */
  backchannelLogoutMaxAgeSeconds: number;
}

export interface AuthConfig {
  port: number;
  host: string;
  managementPort: number;
  /** Where browsers reach this service; Keycloak redirects to `${publicBaseUrl}/redirect`. */
  publicBaseUrl: string;
  allowedRedirects: RedirectAllowlist;
  /** The identity headers of GET /auth's 200 (Auth__IdentityHeaders); empty: none. */
  identityHeaders: readonly IdentityHeader[];
  /** Where GET /signin sends a browser to sign in with a one-time password (Auth__SignInPageUrl); unset: the Keycloak login. */
  signInPageUrl: string | undefined;
  /** Trust X-Forwarded-For from this many proxy hops (0: use the peer address). */
  proxyHops: number;
  /** Processes serving the ports (node:cluster workers); 1: the process itself, no cluster. */
  workers: number;
  session: SessionLifetimes;
  environment: 'Development' | 'Production' | 'Other';
  tls: { certPath: string; keyPath: string } | undefined;
  /** TLS ends at a proxy in front (Tls__TerminatedUpstream): without files, a self-signed pair serves that hop. */
  tlsTerminatedUpstream: boolean;
  oidc: OidcSettings;
  groups: Readonly<Record<Role, string>>;
  locales: { supported: readonly string[]; fallback: string };
  otp: OtpLimits;
  otpFraud: OtpFraudControls;
  kafka: { brokers: readonly string[]; notificationsTopic: string; userAuthenticationTopic: string; publishTimeoutMs: number };
  cache: { address: string; deadlineMs: number };
  logLevel: string;
  shutdownGraceMs: number;
  /** Problems that do not stop the service but must be logged at start (e.g. ignored settings). */
  warnings: string[];
}

const LOCALE = /^[a-z]{2,3}(-[A-Za-z0-9]{2,8})?$/;

/**
 * Every variable of the service, declared once: name, schema, default and description (`make docs`
 * writes the README's settings table from it).
 */
export const settings = {
  Auth__Port: env.port(5555).describe('HTTPS port'),
  Auth__Host: env.string().default('0.0.0.0').describe('Listening address'),
  Auth__PublicBaseUrl: env
    .url(['https', 'http'])
    .refine((url) => !/[?#]/.test(url), { message: 'must have no query or fragment' })
    .optional()
    .describe('Where browsers reach the service (unset: `https://localhost:{Auth__Port}`); Keycloak redirects to `{this}/redirect`'),
  Auth__AllowedRedirectUris: env
    .list()
    .transform(parsedBy(parseAllowlist))
    .optional()
    .describe('Allowed `redirectUri`s: exact origins (any path) or prefixes ending in `/`, comma-separated; unset: every `/login` is 400'),
  Auth__TrustProxy: env.bool(false).describe('Behind a proxy: the client IP from `X-Forwarded-For` (see `Auth__ProxyHops`); the page a browser asked for from `X-Original-URL` or `X-Forwarded-*` (forward-auth)'),
  Auth__ProxyHops: env.positiveInt(1).describe('With `Auth__TrustProxy`: take the client IP this many entries from the right of `X-Forwarded-For`'),
  Auth__IdentityHeaders: env
    .list()
    .superRefine((items, ctx) => void parsedBy(parseIdentityHeaders)(items, ctx))
    .default(['user', 'phone', 'groups', 'role'])
    .describe('Identity headers of a `GET /auth` 200: `user`, `phone`, `groups`, `role`, each optionally `=Header-Name` (default `X-Auth-Request-User` etc.), or `none`'),
  Auth__SignInPageUrl: env
    .url(['https', 'http'])
    .refine((url) => !url.includes('#'), { message: 'must have no fragment' })
    .optional()
    .describe('A page for browsers to sign in by OTP: `GET /signin` sends them there with `rd` (unset: to Keycloak)'),
  Auth__Workers: z.coerce.number().int().min(1).max(64).default(1).describe('Processes serving this replica (1-64): above 1, node:cluster workers, each with its own near cache; give the pod as many CPUs'),
  Auth__SessionNearCacheEntries: z.coerce.number().int().min(0).max(1_000_000).default(10_000).describe('Sessions a replica keeps in its near cache (0-1000000, LRU); `0`: every `GET /auth` reads the cache service'),
  Auth__MaxSessionsPerUser: z.coerce.number().int().min(1).max(100).default(10).describe('Live sessions of one user (1-100); a login past it ends the oldest'),
  Auth__SessionIdleSeconds: env.positiveInt(1800).describe('A session ends after this long without a `GET /auth` (to within a tenth of it)'),
  Auth__SessionMaxSeconds: env.positiveInt(36_000).describe('A session ends this long after its login; the cookie\'s `Max-Age`; at least the idle limit'),
  Auth__SessionRenewBeforeSeconds: env.positiveInt(60).describe('`GET /auth` renews the access token when it has less than this left (at most half its lifespan)'),
  Auth__Groups__Client: env.string().default('clients').describe('Keycloak group (top level, by name) of `X-Role-Claim: client`'),
  Auth__Groups__Subscriber: env.string().default('subscribers').describe('Keycloak group of `X-Role-Claim: subscriber`'),
  Auth__SupportedLocales: env
    .list()
    .refine((items) => items.every((item) => LOCALE.test(item)), { message: 'must list locales such as en,de,fr' })
    .default(['en', 'de', 'fr', 'es'])
    .describe('Locales handed to Keycloak and the SMS event'),
  Auth__DefaultLocale: z.string().regex(LOCALE, 'must be a locale such as en').default('en').describe('Locale when neither the request body nor `Accept-Language` names a supported one'),
  Tls__CertPath: env.string().optional().describe('PEM certificate chain; required in Production unless `Tls__TerminatedUpstream`; unset elsewhere: a self-signed pair is generated'),
  Tls__KeyPath: env.string().optional().describe('PEM private key of `Tls__CertPath`'),
  Tls__TerminatedUpstream: env.bool(false).describe('`true`: TLS ends at a proxy in front (the chart\'s default); without the files a self-signed certificate serves that hop'),
  Oidc__Realm: env.string().describe('Keycloak realm; the issuer (discovery) is `{Oidc__ServerUrl}/realms/{Oidc__Realm}`'),
  Oidc__ServerUrl: env.url(['https', 'http']).describe('Keycloak base URL; plain `http` is refused in Production unless the host is a loopback address'),
  Oidc__ClientId: env.string().describe('The service\'s confidential client (browser login, and the OTP login\'s `verified phone direct grant`)'),
  Oidc__ClientSecret: env.string().describe('Its secret'),
  Oidc__AdminCredentials__Username: env.string().describe('A realm user with `manage-users`, `view-users`, `query-users`, `query-groups` (through `admin-cli`)'),
  Oidc__AdminCredentials__Password: env.string().describe('Its password'),
  Oidc__StateTtlSeconds: env.positiveInt(300).describe('Life of a browser login\'s PKCE verifier (`oidc:{state}`)'),
  Oidc__TimeoutMs: env.positiveInt(5000).describe('Upper bound of one call to Keycloak'),
  Oidc__BackchannelLogoutMaxAgeSeconds: z.coerce.number().int().min(1).max(3600).default(120).describe('Oldest back-channel Logout Token accepted, by its `iat` (1-3600); also how long its `jti` is remembered'),
  IGNORE_SSL_CERT_VALIDATION: env.bool(false).describe('Outside Production only: accept any certificate from Keycloak (a warning at start)'),
  ASPNETCORE_ENVIRONMENT: env.string().optional().describe('The environment (unset: `NODE_ENV`, else Production); `Development`: `POST /otp` answers with the code'),
  NODE_ENV: env.string().optional().describe('The environment when `ASPNETCORE_ENVIRONMENT` is unset (a differing one is ignored with a warning)'),
  MessageBroker__BrokerList: env.list().describe('Kafka brokers, comma-separated'),
  MessageBroker__NotificationsTopic: env.string().default('notifications').describe('Topic of `SendSmsNotificationEvent`'),
  MessageBroker__UserAuthenticationTopic: env.string().default('user-authentication').describe('Topic of `UserLoggedInEvent`'),
  MessageBroker__PublishTimeoutMs: env.positiveInt(5000).describe('Upper bound of one publish (retries included); past it the request answers 503'),
  Cache__Url: env.cacheAddress().describe('The cache service, `host:port` or `[ipv6]:port` (a `grpc://` or `dns:` prefix is accepted)'),
  Cache__DeadlineMs: env.positiveInt(2000).describe('Upper bound of one cache call (retries included)'),
  Otp__TtlSeconds: env.positiveInt(300).describe('Life of a code (TTL of `otp:{phone}:secret` and its attempt tokens)'),
  Otp__MaxAttempts: env.positiveInt(5).describe('Wrong codes accepted per code'),
  Otp__ResendCooldownSeconds: z.coerce.number().int().min(0).default(30).describe('Least time between two codes for one number (0: none)'),
  Otp__MaxPerPhone: env.positiveInt(5).describe('Codes per number in the rate-limit window'),
  Otp__MaxPerIp: env.positiveInt(20).describe('Codes per client IP (IPv6: per /64) in the window'),
  Otp__RateLimitWindowSeconds: env.positiveInt(3600).describe('The rate-limit window, which begins with the first code'),
  // OTP fraud controls (OtpFraudControls; README "Fraud controls")
  Otp__PrefixDigits: z.coerce.number().int().min(1).max(14).default(6).describe('National digits after the country code that make a number\'s prefix (e.g. `+49151234`)'),
  Otp__MaxPerPrefix: env.positiveInt(20).describe('Codes per number prefix in the window'),
  Otp__MaxPerMinute: env.positiveInt(600).describe('Codes per minute for the whole platform, all replicas together; past it `POST /otp` answers 503'),
  Otp__AllowedCountries: env.list().transform(countryCodes(true)).default(new Set(['*'])).describe('ISO 3166-1 alpha-2 codes whose numbers get codes; `*`: every country but `001` (numbers of no country)'),
  Otp__BlockedCountries: env.list().transform(countryCodes(false)).default(new Set()).describe('Countries whose numbers never get a code (wins over allowed)'),
  Otp__MonitoredCountries: env.list().transform(countryCodes(false)).default(new Set()).describe('Allowed countries whose codes are counted (`auth_otp_monitored_total`) and logged as a warning'),
  Otp__AllowedNumberTypes: env
    .list()
    .transform((items) => items.map((item) => item.toUpperCase()))
    .refine((items): items is NumberType[] => items.every((item) => (NUMBER_TYPES as readonly string[]).includes(item)), { message: `must list types among ${NUMBER_TYPES.join(', ')}` })
    .transform((items) => new Set(items))
    .default(new Set<NumberType>(['MOBILE', 'FIXED_LINE_OR_MOBILE']))
    .describe('libphonenumber number types that get codes (also `FIXED_LINE`, `TOLL_FREE`, `PREMIUM_RATE`, `VOIP`, …)'),
  ...operationsEnv,
};

type Input = Readonly<Record<string, string>>;

/**
 * The one switch: ASPNETCORE_ENVIRONMENT when set, else NODE_ENV, else Production. Only the exact
 * name Development (any case) turns development behaviour on, so a typo stays on the safe side.
 */
function environmentOf(input: { ASPNETCORE_ENVIRONMENT?: string | undefined; NODE_ENV?: string | undefined }): AuthConfig['environment'] {
  const name = (input.ASPNETCORE_ENVIRONMENT ?? input.NODE_ENV ?? 'Production').toLowerCase();
  if (name === 'development') return 'Development';
  if (name === 'production') return 'Production';
  return 'Other';
}

function isLoopbackHttp(url: string): boolean {
  const parsed = new URL(url);
  if (parsed.protocol !== 'http:') return false;
  const host = parsed.hostname.replace(/^\[|\]$/g, '');
  return host === 'localhost' || (isIP(host) === 4 && host.startsWith('127.')) || host === '::1';
}

function readable(path: string): boolean {
  try {
    accessSync(path, constants.R_OK);
    return true;
  } catch {
    return false;
  }
}

/** The idle limit within the absolute one (each is validated on its own by the schema). */
function sessionProblems(input: Input): string[] {
  const idle = Number(input.Auth__SessionIdleSeconds ?? 1800);
  const max = Number(input.Auth__SessionMaxSeconds ?? 36_000);
  return idle > max ? [`Auth__SessionIdleSeconds: must not exceed Auth__SessionMaxSeconds (${max})`] : [];
}

/** What Production forbids: a plain-http identity provider elsewhere than on loopback, serving without a certificate, unchecked certificates. */
function productionProblems(input: Input): string[] {
  const problems: string[] = [];
  const server = input.Oidc__ServerUrl;
  if (server !== undefined && URL.canParse(server) && new URL(server).protocol === 'http:' && !isLoopbackHttp(server)) {
    problems.push('Oidc__ServerUrl: must be https in Production (plain http is accepted for loopback addresses or outside Production)');
  }
  if (input.Tls__CertPath === undefined && input.Tls__KeyPath === undefined && !isTrueFlag(input.Tls__TerminatedUpstream)) {
    problems.push('Tls__CertPath: required in Production, with Tls__KeyPath (or Tls__TerminatedUpstream=true when TLS ends at a proxy in front of the service)');
  }
  if (isTrueFlag(input.IGNORE_SSL_CERT_VALIDATION)) problems.push('IGNORE_SSL_CERT_VALIDATION: must not be true in Production');
  return problems;
}

/** Rules across variables, over the raw values. */
function crossCheck(input: Input): string[] {
  const problems = environmentOf(input) === 'Production' ? productionProblems(input) : [];
  if ((input.Tls__CertPath === undefined) !== (input.Tls__KeyPath === undefined)) {
    problems.push('Tls__CertPath and Tls__KeyPath: give both or neither');
  }
  problems.push(...sessionProblems(input));
  problems.push(...otpFraudProblems(input));
  for (const name of ['Tls__CertPath', 'Tls__KeyPath'] as const) {
    const path = input[name];
    if (path !== undefined && !readable(path)) problems.push(`${name}: cannot read ${path}`);
  }
  return problems;
}

type Vars = ReturnType<typeof parseEnv<typeof settings>>;

function oidcSettings(vars: Vars, mode: AuthConfig['environment']): OidcSettings {
  const serverUrl = vars.Oidc__ServerUrl.replace(/\/+$/, '');
  return {
    issuer: keycloakIssuer(serverUrl, vars.Oidc__Realm),
    serverUrl,
    realm: vars.Oidc__Realm,
    clientId: vars.Oidc__ClientId,
    clientSecret: vars.Oidc__ClientSecret,
    adminUsername: vars.Oidc__AdminCredentials__Username,
    adminPassword: vars.Oidc__AdminCredentials__Password,
    allowInsecureHttp: isLoopbackHttp(serverUrl) || mode !== 'Production',
    ignoreCertificateErrors: vars.IGNORE_SSL_CERT_VALIDATION && mode !== 'Production',
    stateTtlSeconds: vars.Oidc__StateTtlSeconds,
    timeoutMs: vars.Oidc__TimeoutMs,
    backchannelLogoutMaxAgeSeconds: vars.Oidc__BackchannelLogoutMaxAgeSeconds,
  };
}

function otpLimits(vars: Vars): OtpLimits {
  return {
    ttlSeconds: vars.Otp__TtlSeconds,
    maxAttempts: vars.Otp__MaxAttempts,
    cooldownSeconds: vars.Otp__ResendCooldownSeconds,
    maxPerPhone: vars.Otp__MaxPerPhone,
    maxPerIp: vars.Otp__MaxPerIp,
    windowSeconds: vars.Otp__RateLimitWindowSeconds,
  };
}

function warningsOf(vars: Vars): string[] {
  const warnings: string[] = [];
  if (vars.IGNORE_SSL_CERT_VALIDATION) warnings.push('IGNORE_SSL_CERT_VALIDATION=true: certificates of the identity provider are NOT validated (development only)');
  const { ASPNETCORE_ENVIRONMENT: switchValue, NODE_ENV: nodeEnv } = vars;
  if (switchValue !== undefined && nodeEnv !== undefined && switchValue.toLowerCase() !== nodeEnv.toLowerCase()) {
    warnings.push(`NODE_ENV=${nodeEnv} is ignored: ASPNETCORE_ENVIRONMENT=${switchValue} decides the environment`);
  }
  return warnings;
}

/**
 * The only reader of the environment (the process' own unless one is given). Every variable is
 * validated at start and every problem reported at once, one line per variable.
 */
export function loadConfig(environment: Env = process.env): AuthConfig {
  const vars = parseEnv(settings, environment, crossCheck);
  const mode = environmentOf(vars);
  const warnings = warningsOf(vars);
  // Set by deployments of earlier versions: sessions are now answered from the near cache.
  if ((environment.Auth__SessionCacheMs ?? '') !== '') warnings.push('Auth__SessionCacheMs is no longer used: sessions are read through the near cache (Auth__SessionNearCacheEntries)');
  const supported = vars.Auth__SupportedLocales.includes(vars.Auth__DefaultLocale) ? vars.Auth__SupportedLocales : [vars.Auth__DefaultLocale, ...vars.Auth__SupportedLocales];
  return {
    port: vars.Auth__Port,
    host: vars.Auth__Host,
    managementPort: vars.Management__Port,
    publicBaseUrl: (vars.Auth__PublicBaseUrl ?? `https://localhost:${vars.Auth__Port}`).replace(/\/+$/, ''),
    allowedRedirects: vars.Auth__AllowedRedirectUris ?? parseAllowlist([]),
    identityHeaders: parseIdentityHeaders(vars.Auth__IdentityHeaders),
    signInPageUrl: vars.Auth__SignInPageUrl,
    proxyHops: vars.Auth__TrustProxy ? vars.Auth__ProxyHops : 0,
    workers: vars.Auth__Workers,
    session: {
      idleSeconds: vars.Auth__SessionIdleSeconds,
      maxSeconds: vars.Auth__SessionMaxSeconds,
      renewBeforeSeconds: vars.Auth__SessionRenewBeforeSeconds,
      nearCacheEntries: vars.Auth__SessionNearCacheEntries,
      maxPerUser: vars.Auth__MaxSessionsPerUser,
    },
    environment: mode,
    tls: vars.Tls__CertPath !== undefined && vars.Tls__KeyPath !== undefined ? { certPath: vars.Tls__CertPath, keyPath: vars.Tls__KeyPath } : undefined,
    tlsTerminatedUpstream: vars.Tls__TerminatedUpstream,
    oidc: oidcSettings(vars, mode),
    groups: { client: vars.Auth__Groups__Client, subscriber: vars.Auth__Groups__Subscriber },
    locales: { supported, fallback: vars.Auth__DefaultLocale },
    otp: otpLimits(vars),
    otpFraud: otpFraudControls(vars),
    kafka: {
      brokers: vars.MessageBroker__BrokerList,
      notificationsTopic: vars.MessageBroker__NotificationsTopic,
      userAuthenticationTopic: vars.MessageBroker__UserAuthenticationTopic,
      publishTimeoutMs: vars.MessageBroker__PublishTimeoutMs,
    },
    cache: { address: vars.Cache__Url, deadlineMs: vars.Cache__DeadlineMs },
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
    warnings,
  };
}
