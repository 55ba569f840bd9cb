import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { checkPhoneCode } from '../src/otp/otp-check.js';
import { newOtpSecret, otpCode } from '../src/otp/otp-codes.js';
import { createOtpStore, type OtpStore } from '../src/otp/otp-store.js';
import { newPhoneNumber } from './support/phones.js';

const MAX_ATTEMPTS = 3;

describe('a one-time code replaced by a newer one while it is being verified', () => {
  let cacheService: RunningCacheService;
  let cache: CacheClient<unknown>;
  let otps: OtpStore;

  beforeAll(async () => {
    cacheService = await startCacheService();
    cache = createCacheClient<unknown>({ address: cacheService.address });
    otps = createOtpStore(cache, { ttlSeconds: 60, maxAttempts: MAX_ATTEMPTS });
  });

  afterAll(async () => {
    cache.close();
    await cacheService.close();
  });

  /** The store, where the user asks for a new code (secret B) right after a verification read the secret. */
  const newCodeAfterRead = (secretB: string): OtpStore => ({
    ...otps,
    async secret(phone) {
      const read = await otps.secret(phone);
      await otps.issue(phone, secretB);
      return read;
    },
  });

  const check = (store: OtpStore, phoneNumber: string, code: string, maxAttempts = MAX_ATTEMPTS) => checkPhoneCode(store, { phoneNumber, code, nowMs: Date.now(), maxAttempts });

  it('should not claim secret B for a claim of secret A read before B was issued', async () => {
    const phone = newPhoneNumber();
    await otps.issue(phone, 'secret-A');
    const read = await otps.secret(phone);
    await otps.issue(phone, 'secret-B');
    expect(await otps.claim(phone, read!)).toBe(false);
    expect(await otps.secret(phone)).toBe('secret-B');
    expect(await otps.claim(phone, 'secret-B')).toBe(true);
    expect(await otps.secret(phone)).toBeUndefined();
  });

  it("should refuse code A once B replaced it during A's verification, and keep B usable", async () => {
    const phone = newPhoneNumber();
    const [secretA, secretB] = [newOtpSecret(), newOtpSecret()];
    await otps.issue(phone, secretA);
    expect(await check(newCodeAfterRead(secretB), phone, await otpCode(secretA, Date.now()))).toBe('reused');
    expect(await check(otps, phone, await otpCode(secretB, Date.now()))).toBe('success');
  });

  it("should lock code A after its last wrong attempt without killing B, issued during that attempt", async () => {
    const phone = newPhoneNumber();
    const [secretA, secretB] = [newOtpSecret(), newOtpSecret()];
    await otps.issue(phone, secretA);
    const wrong = String((Number(await otpCode(secretA, Date.now())) + 1) % 1_000_000).padStart(6, '0');
    expect(await check(newCodeAfterRead(secretB), phone, wrong, 1)).toBe('wrong_code');
    expect(await otps.secret(phone)).toBe(secretB);
    expect(await check(otps, phone, await otpCode(secretB, Date.now()))).toBe('success');
  });

  it('should discard an unsent code A without removing B, issued meanwhile', async () => {
    const phone = newPhoneNumber();
    await otps.issue(phone, 'secret-A');
    await otps.issue(phone, 'secret-B');
    await otps.discard(phone, 'secret-A');
    expect(await otps.secret(phone)).toBe('secret-B');
    await otps.discard(phone, 'secret-B');
    expect(await otps.secret(phone)).toBeUndefined();
  });
});
