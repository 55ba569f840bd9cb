import { describe, expect, it } from '@jest/globals';
import type { OidcTokenClient } from '../src/oidc-token-client.js';
import { withTokenRetry } from '../src/token-retry.js';

/** Hands out token-1, token-2, … : a new one only after the current one was dropped. */
function tokenSequence(): OidcTokenClient & { dropped: string[] } {
  let n = 1;
  const dropped: string[] = [];
  return {
    token: () => Promise.resolve(`token-${n}`),
    invalidate: (token) => {
      dropped.push(token);
      if (token === `token-${n}`) n += 1;
    },
    dropped,
  };
}

describe('withTokenRetry', () => {
  it('should call once with the current token when it is accepted', async () => {
    const tokens = tokenSequence();
    const used: string[] = [];
    const answer = await withTokenRetry(tokens, (token) => (used.push(token), Promise.resolve({ status: 200 })), { answer: (a) => a.status === 401 });
    expect([answer.status, used, tokens.dropped]).toEqual([200, ['token-1'], []]);
  });

  it('should drop a token refused by the answer and repeat the call once with a fresh one', async () => {
    const tokens = tokenSequence();
    const used: string[] = [];
    const answer = await withTokenRetry(tokens, (token) => (used.push(token), Promise.resolve({ status: token === 'token-1' ? 401 : 200 })), { answer: (a) => a.status === 401 });
    expect([answer.status, used, tokens.dropped]).toEqual([200, ['token-1', 'token-2'], ['token-1']]);
  });

  it('should drop a token refused by a failure, and hand a second refusal to the caller', async () => {
    const tokens = tokenSequence();
    const used: string[] = [];
    const refusal = Object.assign(new Error('HTTP 401'), { status: 401 });
    const outcome = withTokenRetry(tokens, async (token): Promise<never> => (used.push(token), Promise.reject(refusal)), { error: (err) => err === refusal });
    await expect(outcome).rejects.toBe(refusal);
    expect([used, tokens.dropped]).toEqual([['token-1', 'token-2'], ['token-1']]);
  });

  it('should keep the token on any other failure', async () => {
    const tokens = tokenSequence();
    await expect(withTokenRetry(tokens, () => Promise.reject(new Error('HTTP 503')), { error: () => false })).rejects.toThrow('HTTP 503');
    expect(tokens.dropped).toEqual([]);
  });
});
