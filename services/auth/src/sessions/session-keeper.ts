import type { CacheClient } from '@sp/cache-client';
import { AppError, poll, unavailable } from '@sp/core';
import type { Logger } from '@sp/observability';
import { tryCacheLock } from '../cache-lock.js';
import type { IdentityProvider } from '../oidc/identity-provider.js';
import type { RenewalResult } from './session-metrics.js';
import type { SessionPolicy } from './session-policy.js';
import { isTokenId, type TokenRecord, type TokenStore } from './token-store.js';

export interface SessionKeeperDeps {
  cache: CacheClient<unknown>;
  tokens: TokenStore;
  identityProvider: IdentityProvider;
  policy: SessionPolicy;
  logger: Logger;
  now: () => number;
  /** Longest one renewal may take (the identity provider's timeout and a margin): the lock's TTL. */
  lockTtlMs: number;
  /** Told the outcome of each refresh grant. */
  onRenewal?: (result: RenewalResult) => void;
}

export interface SessionKeeper {
  /**
   * What GET /auth may serve for the record it found: the record itself before its `renewAtMs`;
   * past it, the record still while its access token is live (renewal runs in the background),
   * else the renewed record, waiting for the renewal. Undefined when the session is over; rejects
   * with a 503 AppError when the token expired and no renewal succeeded in time.
   */
  current(tokenId: string | undefined, record: TokenRecord | undefined): Promise<TokenRecord | undefined>;
  /** Ends a session (logout): waits for a renewal in progress, then removes the record and returns it. */
  end(tokenId: string | undefined): Promise<TokenRecord | undefined>;
}

/** How soon this replica tries again after a renewal that failed or that another one was running. */
const RETRY_MS = 1000;
/** Most sessions this replica keeps a retry time for; past it they are forgotten (each is retried at once). */
const RETRY_MAX = 10_000;
/** How often a request with an expired token looks whether another replica has renewed it. */
const POLL_MS = 100;
const BUSY = Symbol('busy');
type Outcome = TokenRecord | undefined | typeof BUSY;

/**
 * Keeps sessions alive across replicas: at most one renewal per session at a time, wherever it
 * runs, under a lock in the cache service (`token-renewal:{tokenId}`, set if absent, with a unique
 * value and a TTL of one renewal), and at most one attempt per session at a time in this replica.
 * Under the lock the record is read again from the cache service, so a renewal another replica
 * just finished is not repeated. The refresh token only ever travels between here, the cache
 * service and Keycloak.
 */
export function createSessionKeeper(deps: SessionKeeperDeps): SessionKeeper {
  const { cache, tokens, policy, now } = deps;
  const lockKey = (tokenId: string): string => `token-renewal:${tokenId}`;
  const inFlight = new Map<string, Promise<Outcome>>();
  const retryAt = new Map<string, number>();


  /** New tokens from Keycloak; undefined when it refused the refresh token (the session is over). */
  const renew = async (record: TokenRecord): Promise<TokenRecord | undefined> => {
    try {
      const renewed = policy.renewed(record, await deps.identityProvider.refresh(record.refreshToken!), now());
      deps.onRenewal?.('renewed');
      return renewed;
    } catch (err) {
      const refused = err instanceof AppError && err.status === 401;
      deps.onRenewal?.(refused ? 'refused' : 'failed');
      if (!refused) throw err;
      deps.logger.info('session ended: the identity provider refused its refresh token');
      return undefined;
    }
  };

  /** Under the lock: the record as the cache service holds it, renewed or marked as seen, written back. */
  const update = async (tokenId: string): Promise<TokenRecord | undefined> => {
    const record = await tokens.read(tokenId);
    if (record === undefined || record.renewAtMs > now()) return record;
    const next = policy.tokenDue(record, now()) ? await renew(record) : policy.seen(record, now());
    const ttlMs = next === undefined ? 0 : policy.ttlMs(next, now());
    if (next === undefined || ttlMs <= 0) {
      await tokens.remove(tokenId);
      return undefined;
    }
    await tokens.replace(tokenId, next, ttlMs);
    return next;
  };

  const underLock = async (tokenId: string): Promise<Outcome> => {
    const release = await tryCacheLock(cache, lockKey(tokenId), deps.lockTtlMs);
    if (release === undefined) return BUSY;
    try {
      return await update(tokenId);
    } finally {
      // A lock left behind expires on its own.
      await release().catch((err: unknown) => deps.logger.warn({ err }, 'releasing a session renewal lock failed'));
    }
  };

  const once = (tokenId: string): Promise<Outcome> => {
    let pending = inFlight.get(tokenId);
    if (pending === undefined) {
      pending = underLock(tokenId).finally(() => inFlight.delete(tokenId));
      inFlight.set(tokenId, pending);
    }
    return pending;
  };

  // The token is still live: nobody waits for this, and a failure only means trying again later
  // (Keycloak down: the live token keeps being served until it expires, never after).
  const inBackground = (tokenId: string): void => {
    if ((retryAt.get(tokenId) ?? 0) > now()) return;
    retryAt.delete(tokenId);
    // Sessions that end during an outage never come back to clear their entry.
    if (retryAt.size >= RETRY_MAX) retryAt.clear();
    once(tokenId).then(
      (outcome) => {
        if (outcome === BUSY) retryAt.set(tokenId, now() + RETRY_MS);
      },
      (err: unknown) => {
        deps.logger.warn({ err }, 'session renewal failed; the access token is served until it expires');
        retryAt.set(tokenId, now() + RETRY_MS);
      },
    );
  };

  // The token has expired: wait for a renewal, here or in the replica that holds the lock.
  const renewNow = async (tokenId: string): Promise<TokenRecord | undefined> => {
    const renewed = await poll(
      async (tries) => {
        if (tries > 0) {
          // Another replica held the lock: its renewal shows in the record, maybe before its lock is gone.
          const record = await tokens.read(tokenId);
          if (record === undefined || record.expiresAtMs > now()) return { record };
        }
        const outcome = await once(tokenId);
        return outcome === BUSY ? undefined : { record: outcome };
      },
      { waitMs: deps.lockTtlMs + POLL_MS, pollMs: POLL_MS, now },
    );
    if (renewed === undefined) throw unavailable('session renewal');
    return renewed.record;
  };

  /** The renewal lock, waited for at most one renewal's time (then the end goes ahead without it). */
  const lockForEnd = (tokenId: string): Promise<(() => Promise<void>) | undefined> =>
    poll(() => tryCacheLock(cache, lockKey(tokenId), deps.lockTtlMs), { waitMs: deps.lockTtlMs, pollMs: POLL_MS, now });

  return {
    async current(tokenId, record) {
      if (tokenId === undefined || record === undefined) return undefined;
      const at = now();
      if (record.renewAtMs > at) return record;
      if (record.expiresAtMs > at) {
        inBackground(tokenId);
        return record;
      }
      return renewNow(tokenId);
    },
    async end(tokenId) {
      if (!isTokenId(tokenId)) return undefined;
      // A renewal in progress would write the session back after its removal.
      const release = await lockForEnd(tokenId);
      try {
        return await tokens.remove(tokenId);
      } finally {
        await release?.().catch(() => undefined);
      }
    },
  };
}
