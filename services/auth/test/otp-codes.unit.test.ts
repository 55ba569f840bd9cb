import { describe, expect, it } from '@jest/globals';
import { checkOtpCode, isOtpCodeFormat, newOtpSecret, OTP_STEP_SECONDS, otpCode } from '../src/otp/otp-codes.js';

describe('TOTP codes', () => {
  const step = OTP_STEP_SECONDS * 1000;
  const issuedAt = Date.UTC(2026, 10, 22, 12, 0, 0) + step - 1000; // one second before a step boundary

  it('should make 6-digit codes from a fresh 160-bit secret per request', async () => {
    const secret = newOtpSecret();
    expect(secret).toMatch(/^[A-Z2-7]{32}$/);
    expect(newOtpSecret()).not.toBe(secret);
    expect(await otpCode(secret, issuedAt)).toMatch(/^\d{6}$/);
  });

  it('should accept the code in its own step and the next one, and refuse it after that', async () => {
    const secret = newOtpSecret();
    const code = await otpCode(secret, issuedAt);
    expect(await checkOtpCode(secret, code, issuedAt)).toBe(true);
    expect(await checkOtpCode(secret, code, issuedAt + 2000)).toBe(true); // the step ended a second after issue
    expect(await checkOtpCode(secret, code, issuedAt + step)).toBe(true);
    expect(await checkOtpCode(secret, code, issuedAt + 2 * step)).toBe(false);
    expect(await checkOtpCode(secret, code, issuedAt - step)).toBe(false); // never a future step
    expect(await checkOtpCode(newOtpSecret(), code, issuedAt)).toBe(false);
  });

  it('should recognise the code format', () => {
    expect(isOtpCodeFormat('012345')).toBe(true);
    for (const value of ['12345', '1234567', '12345a', ' 123456', 123456, null]) expect(isOtpCodeFormat(value)).toBe(false);
  });
});
