import { describe, expect, it } from '@jest/globals';
import { AppError } from '@sp/core';
import { ipRateLimitKey } from '../src/otp/client-ip.js';
import { resolveLocale } from '../src/http/locale.js';
import { newLoginState, newPkcePair, parseLoginState } from '../src/oidc/oidc-state.js';
import { normalizePhoneNumber } from '../src/otp/phone.js';
import { clearedSessionCookie, readSessionCookie, sessionCookie } from '../src/sessions/session-cookie.js';
import { createHash } from 'node:crypto';

const refusal = (run: () => unknown): string => {
  try {
    run();
  } catch (err) {
    if (err instanceof AppError && err.status === 400) return err.message;
    throw err;
  }
  throw new Error('accepted');
};

describe('normalizePhoneNumber', () => {
  it.each([
    ['+49 151 23456789', '+4915123456789'],
    ['+49 (151) 234-567-89', '+4915123456789'],
    ['+1 202-555-0143', '+12025550143'],
    [' +447911123456 ', '+447911123456'],
  ])('should normalize %s to %s', (input, expected) => {
    expect(normalizePhoneNumber(input)).toBe(expected);
  });

  it.each([
    '0151 23456789',
    '+49 123',
    '+4915123456789 ext. 5',
    'phone',
    '+'.padEnd(40, '1'),
    4915123456789,
    'call +4915123456786 now',
    'tel:+4915123456786',
    '+49151\u200b23456786',
    '\u200b+4915123456786',
    '+4915123456786\u00a0',
    '+49 151 2345678x6',
    '++4915123456786',
    '+4915123456786\n',
    '+49１５１23456786',
  ])('should refuse %j', (input) => {
    expect(refusal(() => normalizePhoneNumber(input))).toMatch(/^phoneNumber must be a valid phone number/);
  });

  it('should require it', () => {
    expect(refusal(() => normalizePhoneNumber(undefined))).toBe('phoneNumber is required');
  });
});

describe('resolveLocale', () => {
  const settings = { supported: ['en', 'de', 'fr', 'es'], fallback: 'en' };
  it('should prefer an explicit supported locale, then Accept-Language by quality, then the fallback', () => {
    expect(resolveLocale('de', 'fr', settings)).toBe('de');
    expect(resolveLocale('DE-at', undefined, settings)).toBe('de');
    expect(resolveLocale('it', 'it-IT, fr;q=0.8, es;q=0.9', settings)).toBe('es');
    expect(resolveLocale(undefined, '*, pt-BR', settings)).toBe('en');
    expect(resolveLocale(42, 'fr;q=0, de;q=0.1', settings)).toBe('de');
  });
});

describe('ipRateLimitKey', () => {
  it('should key IPv4 by address and IPv6 by /64', () => {
    expect(ipRateLimitKey('192.0.2.1')).toBe('192.0.2.1');
    expect(ipRateLimitKey('::ffff:192.0.2.1')).toBe('192.0.2.1');
    expect(ipRateLimitKey('2001:db8:0:1:aaaa::1')).toBe('2001:db8:0:1::/64');
    expect(ipRateLimitKey('2001:0db8:0000:0001:ffff:0:0:2')).toBe('2001:db8:0:1::/64');
    expect(ipRateLimitKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(ipRateLimitKey('::1')).toBe('0:0:0:0::/64');
  });
});

describe('login state and PKCE', () => {
  it('should carry the redirect URI and a 256-bit nonce, base64url', () => {
    const { state, nonce } = newLoginState('https://app.example.test/');
    expect(state).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(Buffer.from(nonce, 'base64url')).toHaveLength(32);
    expect(parseLoginState(state)).toEqual({ redirectUri: 'https://app.example.test/', nonce });
    expect(newLoginState('https://app.example.test/').nonce).not.toBe(nonce);
  });

  it('should refuse states that are not its own shape', () => {
    const encode = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');
    expect(refusal(() => parseLoginState(undefined))).toBe('state is required');
    for (const state of ['a.b', encode([1]), encode({ redirectUri: 'x' }), encode({ redirectUri: 'x', nonce: 'short' }), 'A'.repeat(1001)]) {
      expect(refusal(() => parseLoginState(state))).toBe('invalid state');
    }
  });

  it('should derive the S256 challenge from a 256-bit verifier', () => {
    const { verifier, challenge } = newPkcePair();
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(challenge).toBe(createHash('sha256').update(verifier).digest('base64url'));
  });
});

describe('session cookie', () => {
  it('should carry the token id with HttpOnly, Secure, SameSite=Lax, Path=/ and Max-Age', () => {
    expect(sessionCookie('abc', 299.7)).toBe('TokenId=abc; Max-Age=299; Path=/; HttpOnly; Secure; SameSite=Lax');
    expect(clearedSessionCookie()).toBe('TokenId=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax');
    expect(readSessionCookie({ cookie: 'a=1; TokenId=xyz; TokenId=other' })).toBe('xyz');
    expect(readSessionCookie({ cookie: 'TokenIdx=1' })).toBeUndefined();
    expect(readSessionCookie({})).toBeUndefined();
    expect(readSessionCookie({ cookie: 'flag; NotTokenId=1;TokenId = spaced ; x=2' })).toBe('spaced');
    expect(readSessionCookie({ cookie: 'x=a=b; TokenId=c=d' })).toBe('c=d');
    expect(readSessionCookie({ cookie: 'TokenId=' })).toBe('');
    expect(readSessionCookie({ cookie: 'a=1;' })).toBeUndefined();
    // Thousands of pairs without "=" (the old scan searched the rest of the header from each one).
    expect(readSessionCookie({ cookie: `${'a;'.repeat(8000)}TokenId=last` })).toBe('last');
    expect(readSessionCookie({ cookie: `${'a;'.repeat(8000)}b` })).toBeUndefined();
  });
});
