import { createHash, randomBytes } from 'node:crypto';
import { badRequest } from '@sp/core';

/** What `state` carries from /login to /redirect. */
export interface LoginState {
  redirectUri: string;
  /** 256 random bits, base64url; also the OIDC nonce, so the ID token is bound to this login. */
  nonce: string;
}

/** What `oidc:{state}` holds from /login to /redirect. */
export interface StateRecord {
  /** The PKCE code verifier. */
  verifier: string;
  /** SHA-256 of the login's browser binding cookie (login-binding.ts). */
  binding: string;
}

export const isStateRecord = (value: unknown): value is StateRecord =>
  typeof value === 'object' && value !== null && typeof (value as StateRecord).verifier === 'string' && typeof (value as StateRecord).binding === 'string';

/** Longest state accepted at /redirect (what /login makes stays well below, see MAX_REDIRECT_URI_LENGTH). */
const MAX_STATE_LENGTH = 1000;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function newLoginState(redirectUri: string): { state: string; nonce: string } {
  const nonce = randomBytes(32).toString('base64url');
  return { state: Buffer.from(JSON.stringify({ redirectUri, nonce } satisfies LoginState)).toString('base64url'), nonce };
}

/** Parses a state from /redirect: 400 unless it is base64url JSON of the right shape. */
export function parseLoginState(state: unknown): LoginState {
  if (typeof state !== 'string' || state === '') throw badRequest('state is required');
  if (state.length > MAX_STATE_LENGTH || !BASE64URL.test(state)) throw badRequest('invalid state');
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(state, 'base64url').toString('utf8'));
  } catch {
    throw badRequest('invalid state');
  }
  const candidate = parsed as Partial<LoginState> | null;
  if (typeof candidate?.redirectUri !== 'string' || typeof candidate.nonce !== 'string' || candidate.nonce.length < 22) throw badRequest('invalid state');
  return { redirectUri: candidate.redirectUri, nonce: candidate.nonce };
}

/** PKCE (RFC 7636) with S256: a 256-bit verifier and its SHA-256 challenge. */
export function newPkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}
