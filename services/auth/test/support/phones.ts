import { randomInt } from 'node:crypto';
import { getCountryCallingCode, parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js/max';
import examples from 'libphonenumber-js/mobile/examples';

/** A fresh valid German mobile number in E.164 (+49 151 + 8 digits), so tests never share state. */
export function newPhoneNumber(): string {
  return `+49151${String(randomInt(10_000_000, 100_000_000))}`;
}

/** The same number as a person would type it. */
export function formatted(phoneNumber: string): string {
  return `${phoneNumber.slice(0, 3)} ${phoneNumber.slice(3, 6)} ${phoneNumber.slice(6)}`;
}

const digits = (count: number): string => String(randomInt(0, 10 ** count)).padStart(count, '0');

/**
 * A valid mobile number (E.164) of `country` (fixed-line-or-mobile where the metadata cannot tell,
 * as for US numbers): its metadata's example with random last digits; `001`: an Iridium satellite phone (+881 6).
 */
export function mobileNumberIn(country: string): string {
  const base = country === '001' ? '+881612345678' : `+${getCountryCallingCode(country as CountryCode)}${examples[country as CountryCode]}`;
  for (let attempt = 0; attempt < 100; attempt++) {
    const candidate = `${base.slice(0, -5)}${digits(5)}`;
    const parsed = parsePhoneNumberFromString(candidate);
    const type = parsed?.getType();
    if (parsed?.isValid() && (type === 'MOBILE' || type === 'FIXED_LINE_OR_MOBILE') && (parsed.country ?? '001') === country) return parsed.number;
  }
  throw new Error(`no mobile number found for ${country}`);
}

/** `count` distinct German mobile numbers sharing one random prefix (the default: +49 and 6 national digits, 151 and 3 more). */
export function numbersSharingPrefix(count: number): { prefix: string; numbers: string[] } {
  const prefix = `+49151${digits(3)}`;
  const numbers = new Set<string>();
  while (numbers.size < count) numbers.add(`${prefix}${digits(5)}`);
  return { prefix, numbers: [...numbers] };
}

/** `count` German mobile numbers (at most 1000), each in a prefix of its own. */
export function numbersInDistinctPrefixes(count: number): string[] {
  const start = randomInt(0, 1000);
  return Array.from({ length: count }, (_, i) => `+49151${String((start + i) % 1000).padStart(3, '0')}${digits(5)}`);
}
