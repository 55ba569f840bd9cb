import type { OtpFraudControls } from '../config.js';
import { otpRefusal } from './otp-refusals.js';
import { NON_GEOGRAPHIC, type PhoneNumber } from './phone.js';

export type OtpPolicy = Pick<OtpFraudControls, 'allowedCountries' | 'blockedCountries' | 'monitoredCountries' | 'allowedNumberTypes'>;

/**
 * Whether `country` may get codes: listed in the allow list, or the list holds `*`, which means
 * every country but not numbers of no country (satellite phones, international networks: costly
 * and a classic pumping target; name 001 to allow them); and never when blocked.
 */
function countryAllowed(policy: OtpPolicy, country: string): boolean {
  if (policy.blockedCountries.has(country)) return false;
  return policy.allowedCountries.has(country) || (policy.allowedCountries.has('*') && country !== NON_GEOGRAPHIC);
}

/**
 * The policy checks of POST /otp, which need no counter and so come before every limit: a number
 * they refuse spends nothing. Throws 403 `country_not_allowed` or 422 `number_type_not_allowed`;
 * answers whether the number's country is monitored (allowed, but counted and logged as risky).
 */
export function checkOtpPolicy(policy: OtpPolicy, phone: PhoneNumber): { monitored: boolean } {
  if (!countryAllowed(policy, phone.country)) throw otpRefusal('country_not_allowed');
  if (phone.type === undefined || !policy.allowedNumberTypes.has(phone.type)) throw otpRefusal('number_type_not_allowed');
  return { monitored: policy.monitoredCountries.has(phone.country) };
}

/** The prefix a number is counted under: `+`, country code and the first `digits` national digits. */
export function numberPrefix(phone: PhoneNumber, digits: number): string {
  return `${phone.callingCode}${phone.nationalNumber.slice(0, digits)}`;
}
