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
}

/** 256 random bits, base64url: 43 characters. */
const TOKEN_ID = /^[A-Za-z0-9_-]{43}$/;

/** Whether a string is a token id this service could have issued (anything else never reaches the cache). */
export const isTokenId = (value: string | undefined): value is string => value !== undefined && TOKEN_ID.test(value);

export function newTokenId(): string {
  return randomBytes(32).toString('base64url');
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
   * The record this replica remembers for a token id (see `localTtlMs`), without asking the cache
   * service: undefined when it remembers none, and then only `get` can tell.
   */
  recall(tokenId: string | undefined): TokenRecord | undefined;
  /** The record in the cache service, past this replica's memory (which it then updates). */
  read(tokenId: string): Promise<TokenRecord | undefined>;
  /**
   * Overwrites the record of an existing token id for `ttlMs`, here and in the cache service. A
   * write that meets this replica's removal of the same token id is removed again.
   */
  replace(tokenId: string, record: TokenRecord, ttlMs: number): Promise<void>;
  /**
   * Removes the record and returns what it held. From the moment it is called, this replica
   * answers the token id as unknown, even to reads that were already under way.
   */
  remove(tokenId: string | undefined): Promise<TokenRecord | undefined>;
}

export interface TokenStoreOptions {
  /**
   * How long this replica may answer from its own memory a token it read from the cache service
   * (0: never). A logout through another replica takes effect here within this time; through this
   * replica, at once. Never past the token's own expiry.
   */
  localTtlMs: number;
  /** Most tokens remembered locally; past it, the one remembered longest ago is forgotten. */
  localMax?: number;
  /**
   * How long this replica keeps answering a token id it removed as unknown, whatever a read that
   * was under way at the time or a late write brings back: longer than any one call to the cache
   * service (Cache__DeadlineMs). Default 60 s.
   */
  removedTtlMs?: number;
  now?: () => number;
}

interface Remembered {
  record: TokenRecord;
  /** When this replica stops answering it from memory, on the local clock. */
  untilMs: number;
}

/**
 * Tokens in the cache service under `token:{tokenId}`; a malformed id never reaches the cache.
 * Reads are remembered locally for a moment (`localTtlMs`), because every request behind the
 * ingress asks /auth and one page load sends a burst of them: without it each of them costs a
 * gRPC round trip to the cache service, which is most of the hot path's time (bench/auth.bench.ts).
 * Only live tokens are remembered, so a new session is never refused for having been looked up.
 *
 * A token id removed here (logout) is marked as removed before anything else happens, and stays
 * marked for `removedTtlMs`: a GET /auth that read the record from the cache service while the
 * logout was removing it would otherwise put it back into this replica's memory, which would then
 * answer 200 for up to `localTtlMs` after the logout's 204. Token ids are never reused, so the mark
 * can only ever refuse a session that has ended.
 */
export function createTokenStore(cache: CacheClient<unknown>, options: TokenStoreOptions = { localTtlMs: 0 }): TokenStore {
  const now = options.now ?? Date.now;
  // Local entries age by a monotonic clock (a wall-clock step must not stretch them), or by the
  // injected clock in tests.
  const localNow = options.now ?? (() => performance.now());
  const localMax = options.localMax ?? 10_000;
  // A plain Map in insertion order rather than an LRU: entries live at most localTtlMs, so the
  // order they were read in is close enough to the order they are used in, and a lookup is one
  // Map read and one clock read on the path of every authenticated request.
  const local = new Map<string, Remembered>();
  const removedTtlMs = options.removedTtlMs ?? 60_000;
  /** Token ids removed here, with when their mark expires (local clock), oldest first. */
  const removed = new Map<string, number>();
  const key = (tokenId: string): string => `token:${tokenId}`;
  const valid = isTokenId;

  const markRemoved = (tokenId: string): void => {
    const at = localNow();
    for (const [id, untilMs] of removed) {
      if (untilMs > at && removed.size < localMax) break;
      removed.delete(id);
    }
    removed.delete(tokenId);
    removed.set(tokenId, at + removedTtlMs);
    local.delete(tokenId);
  };
  const wasRemoved = (tokenId: string): boolean => (removed.get(tokenId) ?? -Infinity) > localNow();

  const remember = (tokenId: string, record: TokenRecord): void => {
    const ttl = Math.min(options.localTtlMs, record.expiresAtMs - now());
    local.delete(tokenId);
    if (ttl <= 0 || wasRemoved(tokenId)) return;
    local.set(tokenId, { record, untilMs: localNow() + ttl });
    if (local.size > localMax) local.delete(local.keys().next().value!);
  };

  // Only well-formed ids are ever remembered, so any other string simply misses here.
  const recall = (tokenId: string | undefined): TokenRecord | undefined => {
    if (tokenId === undefined) return undefined;
    const entry = local.get(tokenId);
    if (entry === undefined) return undefined;
    if (entry.untilMs > localNow()) return entry.record;
    local.delete(tokenId);
    return undefined;
  };

  const read = async (tokenId: string): Promise<TokenRecord | undefined> => {
    const value = await cache.get(key(tokenId));
    // Checked after the read: a logout may have started while it was under way.
    if (!isTokenRecord(value) || wasRemoved(tokenId)) {
      local.delete(tokenId);
      return undefined;
    }
    remember(tokenId, value);
    return value;
  };

  const get = async (tokenId: string | undefined): Promise<TokenRecord | undefined> => {
    if (!valid(tokenId)) return undefined;
    return recall(tokenId) ?? read(tokenId);
  };

  return {
    async save(record, ttlMs) {
      const tokenId = newTokenId();
      await cache.set(key(tokenId), record, ttlMs);
      return tokenId;
    },
    get,
    recall,
    read: (tokenId) => (valid(tokenId) ? read(tokenId) : Promise.resolve(undefined)),
    async replace(tokenId, record, ttlMs) {
      await cache.set(key(tokenId), record, ttlMs);
      // A renewal that outlived the logout's wait for it must not bring the session back.
      if (wasRemoved(tokenId)) await cache.remove(key(tokenId));
      else remember(tokenId, record);
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
