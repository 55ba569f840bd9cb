import { parsePhoneNumberFromString } from 'libphonenumber-js/core';
// The full ("max") metadata, as an ES module: exact validity per country, not just lengths.
import metadata from 'libphonenumber-js/max/metadata';
import { badRequest } from '@sp/platform';

/** Longest input looked at; E.164 numbers have at most 15 digits, so formatting leaves room enough. */
const MAX_INPUT_LENGTH = 32;

/**
 * The phone number in E.164 (`+4915123456789`), or a 400. Numbers must be given in
 * international form (a leading `+` and the country code; spaces, dashes, dots and brackets
 * are accepted) and must be valid for their country by libphonenumber's full metadata;
 * extensions are refused, since an SMS cannot reach one.
 */
export function normalizePhoneNumber(input: unknown): string {
  if (input === undefined || input === null || input === '') throw badRequest('phoneNumber is required');
  const parsed = typeof input === 'string' && input.length <= MAX_INPUT_LENGTH ? parsePhoneNumberFromString(input.trim(), metadata) : undefined;
  if (parsed === undefined || !parsed.isValid() || parsed.ext !== undefined) {
    throw badRequest('phoneNumber must be a valid phone number in international format, e.g. +4915123456789');
  }
  return parsed.number;
}
