import { parsePhoneNumberFromString } from 'libphonenumber-js/core';
// The full ("max") metadata, as an ES module: exact validity per country, not just lengths.
import metadata from 'libphonenumber-js/max/metadata';
import { badRequest } from '@sp/platform';

/** Longest input looked at; E.164 numbers have at most 15 digits, so formatting leaves room enough. */
const MAX_INPUT_LENGTH = 32;
/**
 * The whole input, apart from surrounding ASCII spaces: a `+`, then digits with single spaces,
 * dashes, dots or brackets between them. Anything else (words around the number, `tel:`, letters,
 * invisible characters such as zero-width spaces) is refused rather than extracted.
 */
const INTERNATIONAL_FORM = /^\+[0-9]+(?:[ ().-]{1,2}[0-9]+)*\)?$/;

/**
 * The phone number in E.164 (`+4915123456789`), or a 400. The input must be one number and
 * nothing else, in international form (a leading `+` and the country code; spaces, dashes, dots
 * and brackets are accepted), valid for its country by libphonenumber's full metadata;
 * extensions are refused, since an SMS cannot reach one.
 */
export function normalizePhoneNumber(input: unknown): string {
  if (input === undefined || input === null || input === '') throw badRequest('phoneNumber is required');
  const text = typeof input === 'string' && input.length <= MAX_INPUT_LENGTH ? input.replace(/^ +| +$/g, '') : '';
  const parsed = INTERNATIONAL_FORM.test(text) ? parsePhoneNumberFromString(text, { extract: false }, metadata) : undefined;
  if (parsed === undefined || !parsed.isValid() || parsed.ext !== undefined) {
    throw badRequest('phoneNumber must be a valid phone number in international format, e.g. +4915123456789');
  }
  return parsed.number;
}
