import { generate, generateSecret, verify } from 'otplib';

/** TOTP parameters (RFC 6238): 6 digits, 300-second steps, HMAC-SHA1. */
export const OTP_DIGITS = 6;
export const OTP_STEP_SECONDS = 300;

const CODE_FORMAT = /^\d{6}$/;

/** A fresh random secret (160 bits, base32) for one code. */
export function newOtpSecret(): string {
  return generateSecret({ length: 20 });
}

/** The code of `secret` at `nowMs`. */
export function otpCode(secret: string, nowMs: number): Promise<string> {
  return generate({ secret, digits: OTP_DIGITS, period: OTP_STEP_SECONDS, epoch: Math.floor(nowMs / 1000) });
}

export function isOtpCodeFormat(code: unknown): code is string {
  return typeof code === 'string' && CODE_FORMAT.test(code);
}

/**
 * Whether `code` is the code of `secret` in the current or the previous step (compared in
 * constant time by otplib). A step ends at a fixed boundary, so a code issued just before one
 * must still work after it; what bounds a code's life is the secret's TTL in the cache.
 */
export async function checkOtpCode(secret: string, code: string, nowMs: number): Promise<boolean> {
  const result = await verify({
    secret,
    token: code,
    digits: OTP_DIGITS,
    period: OTP_STEP_SECONDS,
    epoch: Math.floor(nowMs / 1000),
    epochTolerance: [OTP_STEP_SECONDS, 0],
  });
  return result.valid;
}
