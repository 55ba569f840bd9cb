import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { readCookie } from '../sessions/session-cookie.js';

/**
 * Binds a login to the browser that started it (login CSRF): /login sets a cookie with 256 random
 * bits and keeps only their SHA-256 in the state record; /redirect goes on only when the browser
 * sends the cookie back. A /redirect URL carried to another browser arrives without it.
 * The cookie is named after the state, so logins started in two tabs do not overwrite each other,
 * and scoped to the /redirect path, so no other request carries it.
 */
export interface LoginBinding {
  /** The cookie's value. */
  secret: string;
  /** What the state record keeps. */
  hash: string;
}

const hashOf = (secret: string): string => createHash('sha256').update(secret).digest('base64url');

export function newLoginBinding(): LoginBinding {
  const secret = randomBytes(32).toString('base64url');
  return { secret, hash: hashOf(secret) };
}

/** `login_` and 96 bits of the state's SHA-256: distinct per login, computable at /redirect. */
export const bindingCookieName = (state: string): string => `login_${createHash('sha256').update(state).digest('base64url').slice(0, 16)}`;

/** The path of /redirect under the public base URL (a proxy may serve the service under a prefix). */
export const redirectPath = (publicBaseUrl: string): string => `${new URL(publicBaseUrl).pathname.replace(/\/+$/, '')}/redirect`;

export function bindingCookie(state: string, secret: string, options: { path: string; maxAgeSeconds: number }): string {
  return `${bindingCookieName(state)}=${secret}; Max-Age=${options.maxAgeSeconds}; Path=${options.path}; HttpOnly; Secure; SameSite=Lax`;
}

export function clearedBindingCookie(state: string, path: string): string {
  return `${bindingCookieName(state)}=; Max-Age=0; Path=${path}; HttpOnly; Secure; SameSite=Lax`;
}

/** True when the request carries the cookie whose hash the state record holds (constant-time). */
export function carriesBinding(headers: IncomingHttpHeaders, state: string, expectedHash: string): boolean {
  const secret = readCookie(headers, bindingCookieName(state));
  if (secret === undefined || secret === '') return false;
  const actual = Buffer.from(hashOf(secret));
  const expected = Buffer.from(expectedHash);
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}
