import type { CacheClient } from '@sp/cache-client';

/** What became of a phone's last code once its secret is gone. */
export type OtpState = 'used' | 'locked';

/**
 * The cache records of one-time passwords, all with the code's TTL:
 *   otp:{phone}:secret          the TOTP secret (removed when used, locked or replaced)
 *   otp:{phone}:attempt:{1..n}  one token per allowed attempt, each consumed by an atomic remove
 *   otp:{phone}:state           `used` or `locked`, so a later attempt can say why it failed
 * Only get, set, remove and removeIfEquals are needed, and both removals tell whether they removed
 * a live entry, atomically in every cache backend: that is what makes a code single-use and the
 * attempt limit hold across replicas of this service. The secret is only ever removed as the
 * secret that was read (removeIfEquals): a newer code issued between the read and the removal
 * keeps its secret.
 */
export interface OtpStore {
  /** Stores a new secret with a full set of attempt tokens, replacing any earlier code. */
  issue(phone: string, secret: string): Promise<void>;
  /** Removes the secret again (its SMS could not be sent), unless a newer code replaced it. */
  discard(phone: string, secret: string): Promise<void>;
  /** Consumes one attempt token: its number, or undefined when none is left. */
  takeAttempt(phone: string): Promise<number | undefined>;
  secret(phone: string): Promise<string | undefined>;
  /** Removes `secret`, the one read; true only for the one caller that removed it (false when a newer code replaced it). */
  claim(phone: string, secret: string): Promise<boolean>;
  /** Records the code as used (after a successful claim). */
  markUsed(phone: string): Promise<void>;
  /** Kills the code of `secret` after too many wrong attempts (a newer code is left alone). */
  lock(phone: string, secret: string): Promise<void>;
  state(phone: string): Promise<OtpState | undefined>;
}

export function createOtpStore(cache: CacheClient<unknown>, settings: { ttlSeconds: number; maxAttempts: number }): OtpStore {
  const ttlMs = settings.ttlSeconds * 1000;
  const secretKey = (phone: string): string => `otp:${phone}:secret`;
  const attemptKey = (phone: string, n: number): string => `otp:${phone}:attempt:${n}`;
  const stateKey = (phone: string): string => `otp:${phone}:state`;
  const attempts = Array.from({ length: settings.maxAttempts }, (_, i) => i + 1);

  return {
    async issue(phone, secret) {
      // Tokens and state first: a secret never exists without its attempts.
      await Promise.all([...attempts.map((n) => cache.set(attemptKey(phone, n), 1, ttlMs)), cache.remove(stateKey(phone))]);
      await cache.set(secretKey(phone), secret, ttlMs);
    },
    async discard(phone, secret) {
      await cache.removeIfEquals(secretKey(phone), secret);
    },
    async takeAttempt(phone) {
      for (const n of attempts) {
        if (await cache.remove(attemptKey(phone, n))) return n;
      }
      return undefined;
    },
    async secret(phone) {
      const value = await cache.get(secretKey(phone));
      return typeof value === 'string' ? value : undefined;
    },
    claim: (phone, secret) => cache.removeIfEquals(secretKey(phone), secret),
    async markUsed(phone) {
      await cache.set(stateKey(phone), 'used', ttlMs);
    },
    async lock(phone, secret) {
      await cache.set(stateKey(phone), 'locked', ttlMs);
      await cache.removeIfEquals(secretKey(phone), secret);
    },
    async state(phone) {
      const value = await cache.get(stateKey(phone));
      return value === 'used' || value === 'locked' ? value : undefined;
    },
  };
}
