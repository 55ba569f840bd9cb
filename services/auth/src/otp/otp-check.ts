import type { VerificationResult } from '../auth-metrics.js';
import { checkOtpCode } from './otp-codes.js';
import type { OtpStore } from './otp-store.js';

export type CheckResult = Exclude<VerificationResult, 'bad_request'>;

/** The 400 message of each refusal. */
export const REFUSALS: Readonly<Record<Exclude<CheckResult, 'success'>, string>> = {
  wrong_code: 'invalid code',
  expired: 'code expired or was never requested; request a new one',
  reused: 'code already used; request a new one',
  too_many_attempts: 'too many wrong codes; request a new one',
};

/**
 * Checks a code against the phone's stored secret, in an order that holds across replicas with
 * only the cache's get, set and atomic remove:
 * 1. every attempt first consumes one attempt token; with none left the code is dead (the
 *    secret is removed): the attempt after the last allowed wrong one fails even with the right code;
 * 2. a missing secret is explained by the phone's state: used, locked, or else expired;
 * 3. a wrong code on the last token locks the code at once;
 * 4. a right code must still be claimed by removing the secret, only if it is still the one read
 *    (RemoveIfEquals): of concurrent verifications of one code only the one whose removal
 *    succeeded passes, the others see it as used; a code replaced by a newer one since it was
 *    read is refused, and the newer code stays usable.
 */
export async function checkPhoneCode(otps: OtpStore, input: { phoneNumber: string; code: string; nowMs: number; maxAttempts: number }): Promise<CheckResult> {
  const { phoneNumber } = input;
  const attempt = await otps.takeAttempt(phoneNumber);
  const secret = await otps.secret(phoneNumber);
  if (secret === undefined) {
    const state = await otps.state(phoneNumber);
    if (state === 'used') return 'reused';
    return state === 'locked' ? 'too_many_attempts' : 'expired';
  }
  if (attempt === undefined) {
    await otps.lock(phoneNumber, secret);
    return 'too_many_attempts';
  }
  if (!(await checkOtpCode(secret, input.code, input.nowMs))) {
    if (attempt >= input.maxAttempts) await otps.lock(phoneNumber, secret);
    return 'wrong_code';
  }
  if (!(await otps.claim(phoneNumber, secret))) return 'reused';
  await otps.markUsed(phoneNumber);
  return 'success';
}
