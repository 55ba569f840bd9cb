import { badRequest } from '@sp/core';

const ABSOLUTE_HTTP = /^https?:\/\//i;
/** Whitespace or control characters anywhere inside the URL. */
const FORBIDDEN_CHARACTER = /[\s\p{Cc}]/u;

const INVALID = 'body must be an absolute http or https URL';

/**
 * Checks a graph endpoint URL as sent by the caller: an absolute http(s) URL with a host, and
 * nothing else (no relative reference, no other scheme, no whitespace inside). Surrounding
 * whitespace, such as the trailing newline of `curl --data-binary @file`, is dropped; the URL
 * is otherwise kept exactly as sent.
 */
export function parseGraphUrl(text: string): string {
  const url = text.trim();
  if (!ABSOLUTE_HTTP.test(url) || FORBIDDEN_CHARACTER.test(url)) throw badRequest(INVALID);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw badRequest(INVALID);
  }
  if (parsed.hostname === '') throw badRequest(INVALID);
  return url;
}
