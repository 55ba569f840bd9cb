import { describe, expect, it } from '@jest/globals';
import { createSecretMatcher } from '../src/secret-matcher.js';

describe('secret matcher', () => {
  it('should match only an exact key of the list', () => {
    const matches = createSecretMatcher(['alpha', 'beta-key']);
    expect(matches('alpha')).toBe(true);
    expect(matches('beta-key')).toBe(true);
    expect(matches('alph')).toBe(false);
    expect(matches('alpha ')).toBe(false);
    expect(matches('beta-key\u0000')).toBe(false);
    expect(matches('')).toBe(false);
    expect(matches(undefined)).toBe(false);
  });

  it('should compare keys of any length, including multi-byte ones, without throwing', () => {
    const matches = createSecretMatcher(['ключ-✓']);
    expect(matches('ключ-✓')).toBe(true);
    expect(matches('k'.repeat(10_000))).toBe(false);
  });

  it('should refuse a value that only starts with a key, or that a key starts with', () => {
    const matches = createSecretMatcher(['short', 'a-much-longer-key']);
    expect(matches('short-and-more')).toBe(false);
    expect(matches('a-much-longer-key!')).toBe(false);
    expect(matches('a-much')).toBe(false);
    expect(matches('short')).toBe(true);
    expect(matches('a-much-longer-key')).toBe(true);
    // Cut mid-character at the comparison width: still no match.
    expect(createSecretMatcher(['abcd'])('abc✓')).toBe(false);
  });
});
