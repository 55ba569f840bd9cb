import type { OidcTokenClient } from './oidc-token-client.js';

/** How a receiver says it refused the token (revoked, or expired early): by its answer, or by failing. */
export interface TokenRefusal<T> {
  /** e.g. an HTTP answer with status 401. */
  answer?: (answer: T) => boolean;
  /** e.g. a client library that throws on 401. */
  error?: (err: unknown) => boolean;
}

/**
 * Runs `call` with a token from `tokens`; when the receiver refused that token, drops it and runs
 * the call once more with a fresh one (a second refusal is the caller's to handle). So a token
 * revoked or expired before its announced end costs one repeated call, not a failed one.
 */
export async function withTokenRetry<T>(tokens: OidcTokenClient, call: (token: string) => Promise<T>, refused: TokenRefusal<T>): Promise<T> {
  const token = await tokens.token();
  try {
    const answer = await call(token);
    if (refused.answer?.(answer) !== true) return answer;
  } catch (err) {
    if (refused.error?.(err) !== true) throw err;
  }
  tokens.invalidate(token);
  return call(await tokens.token());
}
