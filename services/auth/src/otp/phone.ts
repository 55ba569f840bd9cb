import { getCountries, parsePhoneNumberFromString, type PhoneNumber as LibraryPhoneNumber, type PhoneNumberType } from 'libphonenumber-js/core';
// The full ("max") metadata, as an ES module: exact validity per country, not just lengths.
import metadata from 'libphonenumber-js/max/metadata';
import { badRequest } from '@sp/core';

/** Longest input looked at; E.164 numbers have at most 15 digits, so formatting leaves room enough. */
const MAX_INPUT_LENGTH = 32;
/**
 * The whole input, apart from surrounding ASCII spaces: a `+`, then digits with single spaces,
 * dashes, dots or brackets between them. Anything else (words around the number, `tel:`, letters,
 * invisible characters such as zero-width spaces) is refused rather than extracted.
 */
const INTERNATIONAL_FORM = /^\+[0-9]+(?:[ ().-]{1,2}[0-9]+)*\)?$/;

/**
 * The country of numbers that belong to none (`+800` freephone, `+870`/`+881` satellite phones,
 * `+882`/`+883` international networks): libphonenumber's region code for them, UN M.49 "World".
 */
export const NON_GEOGRAPHIC = '001';

/** The ISO 3166-1 alpha-2 codes the metadata knows, and NON_GEOGRAPHIC: what a country setting may name. */
export const KNOWN_COUNTRIES: ReadonlySet<string> = new Set<string>([...getCountries(metadata), NON_GEOGRAPHIC]);

/** Every type libphonenumber's metadata gives a number. */
export const NUMBER_TYPES = [
  'MOBILE',
  'FIXED_LINE_OR_MOBILE',
  'FIXED_LINE',
  'TOLL_FREE',
  'PREMIUM_RATE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const satisfies readonly PhoneNumberType[];
export type NumberType = (typeof NUMBER_TYPES)[number];

/** A valid phone number and what its metadata says about it. */
export interface PhoneNumber {
  /** E.164, e.g. `+4915123456789`. */
  number: string;
  /** ISO 3166-1 alpha-2 region of the number (`GG` for a Guernsey `+44 7911` number), or NON_GEOGRAPHIC. */
  country: string;
  /** The number's type; undefined when the metadata cannot tell. */
  type: NumberType | undefined;
  /** `+` and the country calling code, e.g. `+49`. */
  callingCode: string;
  /** The national significant number, e.g. `15123456789`. */
  nationalNumber: string;
}

/** The input as a valid number in international form, without an extension; undefined otherwise. */
function validNumber(input: unknown): LibraryPhoneNumber | undefined {
  const text = typeof input === 'string' && input.length <= MAX_INPUT_LENGTH ? input.replace(/^ +| +$/g, '') : '';
  const parsed = INTERNATIONAL_FORM.test(text) ? parsePhoneNumberFromString(text, { extract: false }, metadata) : undefined;
  return parsed?.isValid() === true && parsed.ext === undefined ? parsed : undefined;
}

/**
 * The phone number with its metadata, or a 400. The input must be one number and nothing else, in
 * international form (a leading `+` and the country code; spaces, dashes, dots and brackets are
 * accepted), valid for its country by libphonenumber's full metadata; extensions are refused,
 * since an SMS cannot reach one.
 */
export function parsePhoneNumber(input: unknown): PhoneNumber {
  if (input === undefined || input === null || input === '') throw badRequest('phoneNumber is required');
  const parsed = validNumber(input);
  if (parsed === undefined) throw badRequest('phoneNumber must be a valid phone number in international format, e.g. +4915123456789');
  return {
    number: parsed.number,
    country: parsed.country ?? NON_GEOGRAPHIC,
    type: parsed.getType(),
    callingCode: `+${parsed.countryCallingCode}`,
    nationalNumber: parsed.nationalNumber,
  };
}

/** The phone number in E.164 (`+4915123456789`), or a 400; see parsePhoneNumber. */
export function normalizePhoneNumber(input: unknown): string {
  return parsePhoneNumber(input).number;
}
