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

/** The TokenId cookie's value, read straight from the Cookie header (the first one when repeated). */
export function readSessionCookie(headers: IncomingHttpHeaders): string | undefined {
  const header = headers.cookie;
  if (header === undefined) return undefined;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq !== -1 && part.slice(0, eq).trim() === COOKIE_NAME) return part.slice(eq + 1).trim();
  }
  return undefined;
}
