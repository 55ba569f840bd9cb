import { beforeAll, describe, expect, it } from '@jest/globals';
import { checkPhoneCode } from '../src/otp/otp-check.js';
import { newOtpSecret, otpCode, OTP_STEP_SECONDS } from '../src/otp/otp-codes.js';
import { createOtpStore, type OtpStore } from '../src/otp/otp-store.js';
import { inProcessCache } from './support/in-process-cache.js';
import { newPhoneNumber } from './support/phones.js';

const MAX_ATTEMPTS = 3;
/** The time every check runs at, a fixed instant: the code's step is the test's choice, not the wall clock's. */
const T0 = Date.UTC(2026, 10, 26, 12, 0, 0);

/**
 * The verification rules of POST /otp/verify on the cache service's memory backend, in process:
 * the order of attempt tokens, secret and state that makes each refusal say why.
 */
describe('checking a one-time code', () => {
  const cache = inProcessCache();
  let otps: OtpStore;

  beforeAll(() => {
    otps = createOtpStore(cache.client, { ttlSeconds: 60, maxAttempts: MAX_ATTEMPTS });
  });

  /** A phone with a freshly issued code, and its code at T0. */
  async function issued(): Promise<{ phoneNumber: string; code: string }> {
    const phoneNumber = newPhoneNumber();
    const secret = newOtpSecret();
    await otps.issue(phoneNumber, secret);
    return { phoneNumber, code: await otpCode(secret, T0) };
  }

  const check = (phoneNumber: string, code: string, nowMs = T0) => checkPhoneCode(otps, { phoneNumber, code, nowMs, maxAttempts: MAX_ATTEMPTS });
  const wrong = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

  it('should accept the right code once, and call it reused after', async () => {
    const { phoneNumber, code } = await issued();
    expect(await check(phoneNumber, code)).toBe('success');
    expect(await check(phoneNumber, code)).toBe('reused');
  });

  it('should accept the code in the next step, and refuse it as wrong two steps on', async () => {
    const late = await issued();
    expect(await check(late.phoneNumber, late.code, T0 + OTP_STEP_SECONDS * 1000)).toBe('success');
    const tooLate = await issued();
    expect(await check(tooLate.phoneNumber, tooLate.code, T0 + 2 * OTP_STEP_SECONDS * 1000)).toBe('wrong_code');
  });

  it('should lock the code on the last allowed wrong attempt, so even the right code then fails', async () => {
    const { phoneNumber, code } = await issued();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) expect(await check(phoneNumber, wrong(code))).toBe('wrong_code');
    expect(await check(phoneNumber, code)).toBe('too_many_attempts');
  });

  it('should still accept the right code after fewer wrong attempts than the limit', async () => {
    const { phoneNumber, code } = await issued();
    for (let attempt = 1; attempt < MAX_ATTEMPTS; attempt++) expect(await check(phoneNumber, wrong(code))).toBe('wrong_code');
    expect(await check(phoneNumber, code)).toBe('success');
  });

  it('should call a code never requested expired', async () => {
    expect(await check(newPhoneNumber(), '123456')).toBe('expired');
  });

  it('should give a new code a full set of attempts after a locked one', async () => {
    const first = await issued();
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) await check(first.phoneNumber, wrong(first.code));
    const secret = newOtpSecret();
    await otps.issue(first.phoneNumber, secret);
    expect(await check(first.phoneNumber, await otpCode(secret, T0))).toBe('success');
  });
});
