import type { SessionLifetimes } from '../config.js';
import type { RenewedTokens } from '../oidc/identity-provider.js';
import type { TokenRecord } from './token-store.js';

/** Who logged in, from where: the part of a session record that no renewal changes. */
export type SessionOwner = Pick<TokenRecord, 'subject' | 'phoneNumber' | 'groups' | 'sessionId' | 'ip' | 'userAgent' | 'idpSessionId'>;

/**
 * The session lifetimes as arithmetic on a TokenRecord (README "Sessions"). A session lives in
 * the cache service until the first of: its idle limit after the last use seen, its absolute limit
 * after the login, and (with no refresh token to renew it) its access token's expiry. Each record
 * carries `renewAtMs`, the one time GET /auth compares on its hot path: before it, the record is
 * served as it is; from it on, the access token is renewed or the use recorded.
 */
export interface SessionPolicy {
  /** The record of a new session, at login. */
  start(owner: SessionOwner, tokens: RenewedTokens, now: number): TokenRecord;
  /** The record after a refresh grant. */
  renewed(record: TokenRecord, tokens: RenewedTokens, now: number): TokenRecord;
  /** The record after a use seen at `now` (no new tokens). */
  seen(record: TokenRecord, now: number): TokenRecord;
  /** Whether the access token is due for renewal, and can be renewed. */
  tokenDue(record: TokenRecord, now: number): boolean;
  /** How long the record may stay in the cache service from `now`; ≤ 0 means the session is over. */
  ttlMs(record: TokenRecord, now: number): number;
  /** Max-Age of the TokenId cookie: the absolute lifetime, the longest the session can live. */
  cookieMaxAgeSeconds: number;
}

/**
 * How often a use is written back: a tenth of the idle limit, between 1 s and 60 s. The idle
 * limit is kept to within this (a session may end up to this much earlier than idle time after
 * its last use), for at most one cache write per session and interval instead of one per request.
 */
export const touchIntervalMs = (idleMs: number): number => Math.min(60_000, Math.max(1000, Math.floor(idleMs / 10)));

/**
 * Taken off the access token's stated life, counted from when the grant was requested (before
 * Keycloak issued it, so the answer's travel time does not count): `exp` is whole seconds, and
 * clocks of two machines differ a little.
 */
const EXPIRY_MARGIN_MS = 2000;

export function createSessionPolicy(lifetimes: Pick<SessionLifetimes, 'idleSeconds' | 'maxSeconds' | 'renewBeforeSeconds'>): SessionPolicy {
  const idleMs = lifetimes.idleSeconds * 1000;
  const maxMs = lifetimes.maxSeconds * 1000;
  const touchMs = touchIntervalMs(idleMs);

  // Renewal starts renewBefore ahead of expiry, but never earlier than half-way through the
  // token's life, or a short-lived token would be renewed on every use.
  const tokenRenewAt = (record: Omit<TokenRecord, 'renewAtMs'>): number => {
    if (record.refreshToken === undefined) return Infinity;
    return record.expiresAtMs - Math.min(lifetimes.renewBeforeSeconds * 1000, (record.expiresAtMs - record.issuedAtMs) / 2);
  };
  const withRenewAt = (record: Omit<TokenRecord, 'renewAtMs'>): TokenRecord => ({
    ...record,
    renewAtMs: Math.min(tokenRenewAt(record), record.lastSeenAtMs + touchMs, record.expiresAtMs),
  });
  const tokenFields = (tokens: RenewedTokens, now: number, previousRefreshToken?: string) => {
    const refreshToken = tokens.refreshToken ?? previousRefreshToken;
    // Keycloak sends refresh_expires_in 0 for a refresh token that does not expire on its own.
    const refreshLife = tokens.refreshExpiresInSeconds === undefined || tokens.refreshExpiresInSeconds === 0 ? undefined : tokens.refreshExpiresInSeconds * 1000;
    const issuedAtMs = Math.min(now, tokens.requestedAtMs ?? now);
    return {
      accessToken: tokens.accessToken,
      expiresAtMs: issuedAtMs + tokens.expiresInSeconds * 1000 - EXPIRY_MARGIN_MS,
      issuedAtMs,
      ...(refreshToken === undefined ? {} : { refreshToken }),
      ...(refreshLife === undefined ? {} : { refreshExpiresAtMs: now + refreshLife }),
    };
  };

  return {
    start: (owner, tokens, now) => withRenewAt({ ...owner, ...tokenFields(tokens, now), createdAtMs: now, sessionEndsAtMs: now + maxMs, lastSeenAtMs: now }),
    renewed(record, tokens, now) {
      const next: Omit<TokenRecord, 'renewAtMs'> = { ...record, ...tokenFields(tokens, now, record.refreshToken), lastSeenAtMs: now };
      // The identity headers' groups follow Keycloak at each renewal, not only at the next login.
      if (tokens.groups !== undefined) next.groups = tokens.groups;
      // The previous refresh token's expiry does not carry over to a new one that states none.
      if (tokens.refreshExpiresInSeconds === undefined || tokens.refreshExpiresInSeconds === 0) delete next.refreshExpiresAtMs;
      return withRenewAt(next);
    },
    seen: (record, now) => withRenewAt({ ...record, lastSeenAtMs: now }),
    tokenDue: (record, now) => tokenRenewAt(record) <= now,
    ttlMs(record, now) {
      const renewable = record.refreshToken === undefined ? record.expiresAtMs : Math.max(record.expiresAtMs, record.refreshExpiresAtMs ?? Infinity);
      return Math.min(record.lastSeenAtMs + idleMs, record.sessionEndsAtMs, renewable) - now;
    },
    cookieMaxAgeSeconds: lifetimes.maxSeconds,
  };
}
