import type { IncomingHttpHeaders } from 'node:http';

export const COOKIE_NAME = 'TokenId';

/**
 * Sent only over HTTPS (Secure), invisible to scripts (HttpOnly), sent on top-level navigations
 * from other sites but not on their subrequests or form posts (SameSite=Lax), for the whole host
 * (Path=/), and gone when the token expires (Max-Age).
 */
const ATTRIBUTES = 'Path=/; HttpOnly; Secure; SameSite=Lax';

export function sessionCookie(tokenId: string, maxAgeSeconds: number): string {
  return `${COOKIE_NAME}=${tokenId}; Max-Age=${Math.max(0, Math.floor(maxAgeSeconds))}; ${ATTRIBUTES}`;
}

export function clearedSessionCookie(): string {
  return `${COOKIE_NAME}=; Max-Age=0; ${ATTRIBUTES}`;
}

/**
 * A cookie's value, read straight from the Cookie header (the first one when repeated). Scanned in
 * place rather than split: GET /auth reads the TokenId cookie on every authenticated request. Each
 * pair is searched for its `=` within itself only, so the work is linear in the header's length:
 * searching the rest of the header from every pair took quadratic time for a header of pairs
 * without `=` (5 ms for 16 KiB, the most Node accepts, on every request).
 */
export function readCookie(headers: IncomingHttpHeaders, name: string): string | undefined {
  const header = headers.cookie;
  if (header === undefined) return undefined;
  for (let start = 0; start < header.length; ) {
    const semicolon = header.indexOf(';', start);
    const end = semicolon === -1 ? header.length : semicolon;
    const pair = header.slice(start, end);
    const eq = pair.indexOf('=');
    if (eq !== -1 && pair.slice(0, eq).trim() === name) return pair.slice(eq + 1).trim();
    start = end + 1;
  }
  return undefined;
}

export const readSessionCookie = (headers: IncomingHttpHeaders): string | undefined => readCookie(headers, COOKIE_NAME);
