import { describe, expect, it } from '@jest/globals';
import { parseAllowlist } from '../src/oidc/redirect-allowlist.js';

describe('parseAllowlist', () => {
  const allowlist = parseAllowlist(['https://app.example.test', 'https://portal.example.test/auth/', 'http://localhost:3000']);

  it.each([
    ['https://app.example.test', 'https://app.example.test/'],
    ['https://app.example.test/any/path?q=1#frag', 'https://app.example.test/any/path?q=1#frag'],
    ['https://APP.example.test:443/x', 'https://app.example.test/x'],
    ['https://portal.example.test/auth/callback', 'https://portal.example.test/auth/callback'],
    ['http://localhost:3000/cb', 'http://localhost:3000/cb'],
  ])('should allow %s (as %s)', (candidate, expected) => {
    expect(allowlist.check(candidate)).toBe(expected);
  });

  it.each([
    'https://app.example.test@evil.example.test/',
    'https://app.example.test:pw@evil.example.test/',
    'https://evil.example.test/?https://app.example.test',
    'https://app.example.test.evil.example.test/',
    'http://app.example.test/',
    'https://app.example.test:8443/',
    'https://portal.example.test/',
    'https://portal.example.test/authx',
    'https://portal.example.test/auth/../admin',
    'https://portal.example.test/auth/%2e%2e/admin',
    '//evil.example.test/',
    'javascript:alert(1)//https://app.example.test',
    'data:text/html,hi',
    'http://localhost:3001/',
    '',
    undefined,
  ])('should refuse %s', (candidate) => {
    expect(allowlist.check(candidate)).toBeUndefined();
  });

  it('should refuse invalid entries with a readable message', () => {
    expect(() => parseAllowlist(['app.example.test'])).toThrow('"app.example.test" is not an absolute URL');
    expect(() => parseAllowlist(['ftp://app.example.test'])).toThrow('must be an http or https URL');
    expect(() => parseAllowlist(['https://u:p@app.example.test'])).toThrow('must not carry user information');
    expect(() => parseAllowlist(['https://app.example.test/?a=b'])).toThrow('must have no query or fragment');
  });

  it('should refuse everything when empty', () => {
    expect(parseAllowlist([]).check('https://app.example.test/')).toBeUndefined();
  });
});
