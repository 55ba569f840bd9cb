import { createHash } from 'node:crypto';
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import type { CacheClient } from '@sp/cache-client';
import { AppError, badRequest, unavailable } from '@sp/core';
import type { IdpFetch } from './idp-http.js';

/** The event a Logout Token carries (OpenID Connect Back-Channel Logout 1.0, section 2.4). */
export const BACKCHANNEL_LOGOUT_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/** Whom a valid Logout Token logs out: a provider session (`sid`), a user (`sub`), or both. */
export interface LogoutTarget {
  sid: string | undefined;
  sub: string | undefined;
}

export interface LogoutTokenSettings {
  /** The realm's issuer: `iss` must be exactly this. */
  issuer: string;
  /** This service's client id: `aud` must be it, alone (a string, or an array of it only). */
  clientId: string;
  /** Oldest `iat` accepted, in seconds; also how long a `jti` is remembered. */
  maxAgeSeconds: number;
}

export interface LogoutTokenDeps {
  /** The provider's JWKS address (from discovery). */
  jwksUri(): Promise<URL>;
  fetch: IdpFetch;
  /** Where used `jti`s are kept, so every replica refuses a replay. */
  cache: CacheClient<unknown>;
  timeoutMs: number;
}

/**
 * How far the provider's clock and this service's may differ (seconds), for `iat` (not in the
 * future) and `exp`: the one number docs/design/auth.md "Back-channel logout" states.
 */
export const LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS = 5;
/** Signatures by the provider's keys only: asymmetric algorithms, never `none` or a MAC. */
const ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'];

const invalid = (why: string): AppError => badRequest(`invalid logout token: ${why}`);

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const nonEmpty = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);

/**
 * Section 2.6 beyond what jwtVerify checks: no audience but this client (jwtVerify only asks that
 * `aud` contains it; OpenID Connect Core 3.1.3.7, which 2.6 refers to, rejects additional
 * audiences the client does not trust, and this service trusts none: a token addressed to other
 * parties too is one they hold and could send here), the event, a subject or session, no nonce,
 * a jti.
 */
function target(payload: JWTPayload, clientId: string): LogoutTarget & { jti: string } {
  if (Array.isArray(payload.aud) && payload.aud.some((audience) => audience !== clientId)) throw invalid('aud names another audience than this client');
  if (!isObject(payload.events)) throw invalid('events must be a JSON object');
  if (!isObject(payload.events[BACKCHANNEL_LOGOUT_EVENT])) throw invalid('events lacks the back-channel logout event');
  if ('nonce' in payload) throw invalid('a logout token carries no nonce');
  const sid = nonEmpty(payload.sid);
  const sub = nonEmpty(payload.sub);
  if (sid === undefined && sub === undefined) throw invalid('it names neither sid nor sub');
  const jti = nonEmpty(payload.jti);
  if (jti === undefined) throw invalid('jti is required');
  return { sid, sub, jti };
}

/**
 * Validates Logout Tokens as OpenID Connect Back-Channel Logout 1.0 (section 2.6) says: a JWS
 * signed by a key of the provider's JWKS (fetched through the identity provider's connection pool
 * and cached by jose, refetched for an unknown `kid`), `iss`, `aud`, `iat` (at most
 * `maxAgeSeconds` old, not in the future), `exp` when present (both with
 * LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS), then the claims above. Only a
 * token that passed all of it spends its `jti`: SetIfAbsent in the cache service with a TTL of
 * the token's acceptable age, so a replay is refused by every replica for as long as the token
 * would otherwise pass, and the record goes by itself.
 */
export function createLogoutTokenVerifier(settings: LogoutTokenSettings, deps: LogoutTokenDeps) {
  let keys: Promise<ReturnType<typeof createRemoteJWKSet>> | undefined;
  const keySet = (): Promise<ReturnType<typeof createRemoteJWKSet>> => {
    keys ??= deps.jwksUri().then(
      (uri) => createRemoteJWKSet(uri, { timeoutDuration: deps.timeoutMs, [customFetch]: (url, init) => deps.fetch(url, init) }),
      (err: unknown) => {
        keys = undefined;
        throw err;
      },
    );
    return keys;
  };
  const jtiTtlMs = (settings.maxAgeSeconds + 2 * LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS) * 1000;

  return async (token: string): Promise<LogoutTarget> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, await keySet(), {
        issuer: settings.issuer,
        audience: settings.clientId,
        algorithms: ALGORITHMS,
        maxTokenAge: settings.maxAgeSeconds,
        clockTolerance: LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS,
        requiredClaims: ['iat'],
      }));
    } catch (err) {
      // The provider's keys could not be fetched: not the token's fault, and the provider retries.
      if (err instanceof AppError) throw err;
      if (err instanceof errors.JOSEError && !(err instanceof errors.JWKSTimeout)) throw invalid(err.code === 'ERR_JWT_EXPIRED' ? 'expired' : err.message);
      throw unavailable('identity provider', err);
    }
    const { jti, ...named } = target(payload, settings.clientId);
    const key = `logout-token-jti:${createHash('sha256').update(`${settings.issuer}\n${jti}`).digest('base64url')}`;
    if (!(await deps.cache.setIfAbsent(key, 1, jtiTtlMs)).stored) throw invalid('already used (jti)');
    return named;
  };
}

export type VerifyLogoutToken = ReturnType<typeof createLogoutTokenVerifier>;
