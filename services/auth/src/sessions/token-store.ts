import { randomBytes } from 'node:crypto';
import type { CacheClient } from '@sp/cache-client';

/**
 * What `token:{tokenId}` holds: one login session, what /auth and /logout need and nothing more.
 * The refresh token never leaves the server. Times are Unix ms; session-policy.ts sets them.
 */
export interface TokenRecord {
  accessToken: string;
  /** Renews the access token (GET /auth) and is revoked at logout, which ends the Keycloak session. */
  refreshToken?: string;
  /** Keycloak user id (`sub`). */
  subject: string;
  phoneNumber: string;
  /**
   * The user's Keycloak groups (the ID token's `groups` claim) at login, updated at each renewal
   * of the access token, for GET /auth's identity headers. Absent in records of earlier versions.
   */
  groups?: string[];
  /** Access token expiry: GET /auth never hands the token out from then on. */
  expiresAtMs: number;
  /** When this access token was received: with `expiresAtMs`, its lifespan. */
  issuedAtMs: number;
  /** Refresh token expiry as Keycloak stated it; absent when it gave none. */
  refreshExpiresAtMs?: number;
  /** The absolute end of the session (login + Auth__SessionMaxSeconds). */
  sessionEndsAtMs: number;
  /** The last use written back; the idle limit counts from it. */
  lastSeenAtMs: number;
  /** From then on GET /auth renews the token or writes the use back; never after `expiresAtMs`. */
  renewAtMs: number;
  /**
   * The session's public id (GET /sessions, DELETE /sessions/{id}): 128 random bits, base64url.
   * Never the token id, which is the bearer credential. Absent in records of earlier versions.
   */
  sessionId?: string;
  /** When the login happened. */
  createdAtMs?: number;
  /** The client IP and User-Agent of the login, shown to the user in GET /sessions. */
  ip?: string;
  userAgent?: string;
  /** Keycloak's session id (`sid` of the ID token): what a back-channel logout names. */
  idpSessionId?: string;
}

/** 256 random bits, base64url: 43 characters. */
const TOKEN_ID = /^[A-Za-z0-9_-]{43}$/;

/** Whether a string is a token id this service could have issued (anything else never reaches the cache). */
export const isTokenId = (value: string | undefined): value is string => value !== undefined && TOKEN_ID.test(value);

export function newTokenId(): string {
  return randomBytes(32).toString('base64url');
}

/** 128 random bits, base64url: 22 characters. */
export function newSessionId(): string {
  return randomBytes(16).toString('base64url');
}

// A record without the session fields (written before sessions were renewed) is not one: that
// session ends, as it would have at its access token's expiry.
function isTokenRecord(value: unknown): value is TokenRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as TokenRecord;
  return typeof record.accessToken === 'string' && typeof record.renewAtMs === 'number' && typeof record.sessionEndsAtMs === 'number';
}

export interface TokenStore {
  /** Stores the record under a fresh token id for `ttlMs` and returns the id. */
  save(record: TokenRecord, ttlMs: number): Promise<string>;
  /** The live record of a token id; undefined for a malformed, unknown or expired one. */
  get(tokenId: string | undefined): Promise<TokenRecord | undefined>;
  /**
   * The record this replica's near cache holds for a token id, without a call or a promise:
   * undefined when it holds none (or is not live), and then only `get` can tell.
   */
  recall(tokenId: string | undefined): TokenRecord | undefined;
  /** The record as `get` reads it, for a token id known to be well formed. */
  read(tokenId: string): Promise<TokenRecord | undefined>;
  /**
   * Overwrites the record of an existing token id for `ttlMs`. A write that meets this replica's
   * removal of the same token id is removed again.
   */
  replace(tokenId: string, record: TokenRecord, ttlMs: number): Promise<void>;
  /**
   * Removes the record and returns what it held. From the moment it is called, this replica
   * answers the token id as unknown, even to reads that were already under way.
   */
  remove(tokenId: string | undefined): Promise<TokenRecord | undefined>;
}

export interface TokenStoreOptions {
  /** Most token ids marked as removed at once (the oldest mark goes first). Default 10,000. */
  removedMax?: number;
  /**
   * How long this replica keeps answering a token id it removed as unknown, whatever a read that
   * was under way at the time or a late write brings back: longer than any one call to the cache
   * service (Cache__DeadlineMs). Default 60 s.
   */
  removedTtlMs?: number;
  now?: () => number;
}

/** Where sessions live in the cache service: `token:{tokenId}` (the near cache covers this prefix). */
export const SESSION_KEY_PREFIX = 'token:';

/**
 * Sessions in the cache service under `token:{tokenId}`; a malformed id never reaches the cache.
 * The cache client's near cache (auth.ts) answers a session it read from memory for as long
 * as the cache service's invalidation stream vouches for it: a change or removal through any
 * replica drops it within milliseconds, and while the stream is down every read goes through.
 * That is what lets every authenticated request's GET /auth skip the gRPC round trip
 * (bench/auth.bench.ts) without answering for a session that has ended elsewhere.
 *
 * A token id removed here (logout) is marked as removed before anything else happens, and stays
 * marked for `removedTtlMs`: a GET /auth that read the record while the logout was removing it
 * would otherwise put it back into the near cache (the read may reach the service before the
 * removal and come back after it), and this replica would answer 200 after the logout's 204 until
 * the removal's invalidation arrived. Token ids are never reused, so the mark can only ever
 * refuse a session that has ended.
 */
export function createTokenStore(cache: CacheClient<unknown>, options: TokenStoreOptions = {}): TokenStore {
  // Marks age by a monotonic clock (a wall-clock step must not shorten them), or by the injected
  // clock in tests.
  const localNow = options.now ?? (() => performance.now());
  const removedMax = options.removedMax ?? 10_000;
  const removedTtlMs = options.removedTtlMs ?? 60_000;
  /** Token ids removed here, with when their mark expires (local clock), oldest first. */
  const removed = new Map<string, number>();
  const key = (tokenId: string): string => `${SESSION_KEY_PREFIX}${tokenId}`;
  const valid = isTokenId;

  const markRemoved = (tokenId: string): void => {
    const at = localNow();
    for (const [id, untilMs] of removed) {
      if (untilMs > at && removed.size < removedMax) break;
      removed.delete(id);
    }
    removed.delete(tokenId);
    removed.set(tokenId, at + removedTtlMs);
  };
  // Checked on every GET /auth: no marks (the usual case) costs one size read.
  const wasRemoved = (tokenId: string): boolean => removed.size > 0 && (removed.get(tokenId) ?? -Infinity) > localNow();
  const live = (tokenId: string, value: unknown): TokenRecord | undefined => (isTokenRecord(value) && !wasRemoved(tokenId) ? value : undefined);

  // Only well-formed ids are ever stored, so any other string simply misses here.
  const recall = (tokenId: string | undefined): TokenRecord | undefined => (tokenId === undefined ? undefined : live(tokenId, cache.peek(key(tokenId))));

  // Checked after the read: a logout may have started while it was under way.
  const read = async (tokenId: string): Promise<TokenRecord | undefined> => live(tokenId, await cache.get(key(tokenId)));

  return {
    async save(record, ttlMs) {
      const tokenId = newTokenId();
      await cache.set(key(tokenId), record, ttlMs);
      return tokenId;
    },
    get: (tokenId) => (valid(tokenId) ? read(tokenId) : Promise.resolve(undefined)),
    recall,
    read: (tokenId) => (valid(tokenId) ? read(tokenId) : Promise.resolve(undefined)),
    async replace(tokenId, record, ttlMs) {
      await cache.set(key(tokenId), record, ttlMs);
      // A renewal that outlived the logout's wait for it must not bring the session back.
      if (wasRemoved(tokenId)) await cache.remove(key(tokenId));
    },
    async remove(tokenId) {
      if (!valid(tokenId)) return undefined;
      markRemoved(tokenId);
      const value = await cache.get(key(tokenId));
      await cache.remove(key(tokenId));
      return isTokenRecord(value) ? value : undefined;
    },
  };
}
