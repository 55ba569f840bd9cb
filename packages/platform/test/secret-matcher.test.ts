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
});
