import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from '@jest/globals';
import { loadConfig } from '../src/config.js';
import { forwardedRequest } from '../src/http/forwarded-request.js';
import { identityHeaders, parseIdentityHeaders } from '../src/http/identity-headers.js';
import type { TokenRecord } from '../src/sessions/token-store.js';
import { configProblems } from '../../../test/support/config-problems.js';

/** The variables the service requires, nothing else. */
const minimalEnv = (): Record<string, string> => ({
  Oidc__Realm: 'subscription-platform',
  Oidc__ServerUrl: 'https://keycloak.example.test',
  Oidc__ClientId: 'platform-auth',
  Oidc__ClientSecret: 'secret',
  Oidc__AdminCredentials__Username: 'platform-admin',
  Oidc__AdminCredentials__Password: 'password',
  MessageBroker__BrokerList: 'kafka:9092',
  Cache__Url: 'cache:7777',
  Tls__TerminatedUpstream: 'true',
});

const GROUPS = { client: 'clients', subscriber: 'subscribers' } as const;

const record = (overrides: Partial<TokenRecord> = {}): TokenRecord => ({
  accessToken: 'eyJ.a.b',
  subject: '7c1f0a52-8d0e-4c55-9a57-1d1f1c1e9b0a',
  phoneNumber: '+4915123456789',
  groups: ['clients', 'beta testers'],
  expiresAtMs: 2,
  issuedAtMs: 1,
  sessionEndsAtMs: 3,
  lastSeenAtMs: 1,
  renewAtMs: 2,
  ...overrides,
});

/** Headers as Node keeps them apart (`headersDistinct`), from name/value pairs in the order sent. */
const distinct = (...pairs: Array<[string, string]>): IncomingMessage['headersDistinct'] => {
  const headers: Record<string, string[]> = {};
  for (const [name, value] of pairs) (headers[name.toLowerCase()] ??= []).push(value);
  return headers;
};

describe('identity headers of GET /auth', () => {
  it('should name every field in the style of oauth2-proxy by default and carry the values of the session record', () => {
    const config = loadConfig(minimalEnv());
    expect(config.identityHeaders.map(({ name }) => name)).toEqual(['X-Auth-Request-User', 'X-Auth-Request-Phone', 'X-Auth-Request-Groups', 'X-Auth-Request-Role']);
    expect(identityHeaders(record(), config.identityHeaders, GROUPS)).toEqual([
      'X-Auth-Request-User', '7c1f0a52-8d0e-4c55-9a57-1d1f1c1e9b0a',
      'X-Auth-Request-Phone', '+4915123456789',
      'X-Auth-Request-Groups', 'clients,beta testers',
      'X-Auth-Request-Role', 'client',
    ]);
  });

  it('should rename headers, leave out unlisted fields, and send none for `none`', () => {
    const headers = parseIdentityHeaders(['user=X-User-Id', 'role']);
    expect(identityHeaders(record({ groups: ['subscribers', 'clients'] }), headers, GROUPS)).toEqual(['X-User-Id', '7c1f0a52-8d0e-4c55-9a57-1d1f1c1e9b0a', 'X-Auth-Request-Role', 'client,subscriber']);
    expect(identityHeaders(record(), parseIdentityHeaders(['none']), GROUPS)).toEqual([]);
  });

  it('should send every configured header, empty, for a session without groups (a record of an earlier version)', () => {
    const headers = parseIdentityHeaders(['groups', 'role']);
    expect(identityHeaders(record({ groups: undefined }), headers, GROUPS)).toEqual(['X-Auth-Request-Groups', '', 'X-Auth-Request-Role', '']);
  });

  it('should percent-encode what a group name could use to split the list, add a header or break the answer', () => {
    const headers = parseIdentityHeaders(['groups']);
    const values = identityHeaders(record({ groups: ['a,b', 'x\r\nX-Auth-Request-User: admin', 'Kunden-ä', '100%'] }), headers, GROUPS);
    expect(values[1]).toBe('a%2Cb,x%0D%0AX-Auth-Request-User%3A%20admin,Kunden-%C3%A4,100%25');
    expect(values[1]!.split(',')).toHaveLength(4);
  });

  it('should refuse unknown fields, header names that are not tokens, reserved names and names given twice, by variable', () => {
    for (const [value, problem] of [
      ['user,email', /"email" is not one of user, phone, groups, role/],
      ['user=X User', /"X User" is not a header name/],
      ['user=Authorization', /"Authorization" is reserved/],
      ['phone=Cookie', /"Cookie" is reserved/],
      ['user=X-Id,phone=x-id', /"x-id" is given twice/],
    ] as const) {
      expect(configProblems(() => loadConfig({ ...minimalEnv(), Auth__IdentityHeaders: value }))).toEqual([expect.stringMatching(new RegExp(`^Auth__IdentityHeaders: .*${problem.source}`))]);
    }
  });
});

describe('the forwarded request behind a trusted proxy', () => {
  it('should take the page from X-Forwarded-Proto, -Host and -Uri, else from X-Original-URL, and the method from X-Forwarded-Method', () => {
    expect(forwardedRequest(distinct(['X-Original-URL', 'https://app.example.test/a?b=1,2']), 'GET', true)).toEqual({ method: 'GET', url: new URL('https://app.example.test/a?b=1,2') });
    const traefik = distinct(['X-Forwarded-Method', 'get'], ['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test:8443'], ['X-Forwarded-Uri', '/orders/7?tab=items']);
    expect(forwardedRequest(traefik, 'GET', true)).toEqual({ method: 'GET', url: new URL('https://app.example.test:8443/orders/7?tab=items') });
    // Traefik and Caddy pass a client's X-Original-URL on: their own headers win.
    const both = distinct(['X-Original-URL', 'https://app.example.test/other'], ['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test'], ['X-Forwarded-Uri', '/orders/7']);
    expect(forwardedRequest(both, 'GET', true).url?.pathname).toBe('/orders/7');
    // Envoy sends the original method as the check's own.
    expect(forwardedRequest(distinct(), 'POST', true).method).toBe('POST');
  });

  it('should know no page without Auth__TrustProxy, whatever the headers say', () => {
    expect(forwardedRequest(distinct(['X-Original-URL', 'https://app.example.test/'], ['X-Forwarded-Method', 'POST']), 'GET', false)).toEqual({ method: 'GET', url: undefined });
  });

  it('should know no page from headers that are repeated, relative, of another scheme or that would move the host', () => {
    for (const headers of [
      distinct(['X-Original-URL', 'https://app.example.test/'], ['X-Original-URL', 'https://evil.example/']),
      distinct(['X-Original-URL', '/relative']),
      distinct(['X-Original-URL', 'javascript:alert(1)']),
      distinct(['X-Original-URL', 'https://app.example.test@evil.example/']),
      distinct(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test'], ['X-Forwarded-Uri', '//evil.example/']),
      distinct(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test'], ['X-Forwarded-Uri', '@evil.example/']),
      distinct(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test@evil.example'], ['X-Forwarded-Uri', '/']),
      distinct(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'evil.example/x'], ['X-Forwarded-Uri', '/']),
      distinct(['X-Forwarded-Proto', 'ftp'], ['X-Forwarded-Host', 'app.example.test'], ['X-Forwarded-Uri', '/']),
      distinct(['X-Forwarded-Proto', 'https'], ['X-Forwarded-Host', 'app.example.test'], ['X-Forwarded-Host', 'evil.example'], ['X-Forwarded-Uri', '/']),
    ]) {
      expect(forwardedRequest(headers, 'GET', true).url).toBeUndefined();
    }
  });
});
