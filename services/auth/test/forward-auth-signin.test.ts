import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { startAll } from '../../../test/support/start-all.js';
import { ALLOWED_ORIGIN, startAuth, type RunningAuth } from './support/auth-fixture.js';
import type { Reply } from './support/https-client.js';
import { issuer } from './support/keycloak.js';
import { otpLogin } from './support/otp-login.js';
import { newPhoneNumber } from './support/phones.js';

/** What a browser's top-level navigation sends (Chromium's). */
const BROWSER = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8' };
/** What a page's fetch() and most API clients send. */
const API = { accept: 'application/json' };
const PAGE = `${ALLOWED_ORIGIN}/orders/7?tab=items&x=1,2`;
/** What Traefik and Caddy send about the request they check. */
const traefik = (url: string, method = 'GET'): Record<string, string> => {
  const parsed = new URL(url);
  return { 'x-forwarded-method': method, 'x-forwarded-proto': parsed.protocol.slice(0, -1), 'x-forwarded-host': parsed.host, 'x-forwarded-uri': `${parsed.pathname}${parsed.search}` };
};

/** Headers a client writes to pass for someone else, or to steer the check. */
const FORGED = {
  'x-auth-request-user': 'admin',
  'x-auth-request-phone': '+15550000000',
  'x-auth-request-groups': 'clients,admins',
  'x-auth-request-role': 'client',
  authorization: 'Bearer forged',
  'x-original-url': `${ALLOWED_ORIGIN}/public`,
  'x-original-method': 'OPTIONS',
  ...traefik(`${ALLOWED_ORIGIN}/public`, 'OPTIONS'),
  'x-forwarded-for': '127.0.0.1',
  'x-real-ip': '127.0.0.1',
};

const identityOf = (reply: Reply): Record<string, string | null> => ({
  user: reply.headers.get('x-auth-request-user'),
  phone: reply.headers.get('x-auth-request-phone'),
  groups: reply.headers.get('x-auth-request-groups'),
  role: reply.headers.get('x-auth-request-role'),
});

describe('GET /auth and GET /signin for reverse proxies: identity headers, the sign-in round trip, forged headers', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let untrusting: RunningAuth;
  let withPage: RunningAuth;
  let events: EventCollector;
  const phoneNumber = newPhoneNumber();
  let cookie: string;

  beforeAll(async () => {
    cacheService = await startCacheService();
    [auth, untrusting, withPage, events] = await startAll<[RunningAuth, RunningAuth, RunningAuth, EventCollector]>([
      [startAuth(cacheService.address), (started) => started.close()],
      [startAuth(cacheService.address, { Auth__TrustProxy: 'false' }), (started) => started.close()],
      [startAuth(cacheService.address, { Auth__SignInPageUrl: `${ALLOWED_ORIGIN}/sign-in?theme=dark` }), (started) => started.close()],
      [collectEvents(['notifications']), (started) => started.close()],
    ]);
    cookie = await otpLogin(auth, events, phoneNumber, { 'x-forwarded-for': '198.51.100.43' });
  }, 60_000);

  afterAll(async () => {
    await events.close();
    await Promise.all([auth.close(), untrusting.close(), withPage.close()]);
    await cacheService.close();
  });

  it('should state the session\'s identity in the headers of a 200, the same whatever the client wrote under those names', async () => {
    const tokenId = cookie.slice('TokenId='.length);
    const record = (await auth.cache.get(`token:${tokenId}`)) as { subject: string };
    const honest = await auth.client.get('/auth', { cookie });
    expect(honest.status).toBe(200);
    expect(identityOf(honest)).toEqual({ user: record.subject, phone: phoneNumber, groups: 'subscribers', role: 'subscriber' });
    for (const headers of [{ cookie, ...FORGED }, { cookie, ...FORGED, ...BROWSER }]) {
      const forged = await auth.client.get('/auth?signin=redirect', headers);
      expect(forged.status).toBe(200);
      expect(identityOf(forged)).toEqual(identityOf(honest));
      expect(forged.headers.get('authorization')).toBe(honest.headers.get('authorization'));
    }
  });

  it('should answer 401 without a live session to API clients, and to browsers whose page no trusted header names', async () => {
    for (const [path, headers] of [
      ['/auth', API],
      ['/auth', BROWSER],
      ['/auth', { ...API, 'x-original-url': PAGE }],
      ['/auth?signin=redirect', BROWSER],
      ['/auth?signin=redirect', { ...API, 'x-original-url': PAGE }],
      ['/auth?signin=redirect', { accept: '*/*', ...traefik(PAGE) }],
      ['/auth?signin=redirect', { ...API, cookie: 'TokenId=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ...traefik(PAGE) }],
    ] as const) {
      const reply = await auth.client.get(path, headers);
      expect([path, headers, reply.status, reply.headers.get('location')]).toEqual([path, headers, 401, null]);
      expect(reply.json()).toEqual({ error: expect.any(String) });
    }
  });

  it('should name where a browser signs in on the 401 for nginx, which redirects there itself', async () => {
    const reply = await auth.client.get('/auth', { ...BROWSER, 'x-original-url': PAGE, 'x-original-method': 'GET' });
    expect(reply.status).toBe(401);
    expect(reply.headers.get('location')).toBe(`${auth.baseUrl}/signin?rd=${encodeURIComponent(PAGE)}`);
  });

  it('should send a browser to /signin with the page it asked for, as nginx (X-Original-URL) or Traefik and Caddy (X-Forwarded-*) name it', async () => {
    for (const headers of [{ 'x-original-url': PAGE }, traefik(PAGE), { ...traefik(PAGE), 'x-forwarded-method': 'HEAD' }]) {
      const reply = await auth.client.get('/auth?signin=redirect', { ...BROWSER, ...headers });
      expect(reply.status).toBe(302);
      expect(reply.headers.get('location')).toBe(`${auth.baseUrl}/signin?rd=${encodeURIComponent(PAGE)}`);
      expect(reply.cookies).toEqual([]);
    }
  });

  it('should answer 401, never a redirect, for a page off the allowlist, a non-GET original, forged host headers, or without Auth__TrustProxy', async () => {
    const cases: Array<[RunningAuth, Record<string, string>]> = [
      [auth, { 'x-original-url': 'https://evil.example/phish' }],
      [auth, traefik('https://evil.example/phish')],
      [auth, { ...traefik(PAGE), 'x-forwarded-host': 'app.example.test@evil.example' }],
      [auth, { ...traefik(PAGE), 'x-forwarded-uri': '//evil.example/phish' }],
      [auth, traefik(PAGE, 'POST')],
      [auth, { 'x-original-url': PAGE, 'x-original-method': 'DELETE' }],
      [auth, { 'x-original-url': 'javascript:alert(1)//app.example.test' }],
      [untrusting, { 'x-original-url': PAGE }],
      [untrusting, traefik(PAGE)],
    ];
    for (const [instance, headers] of cases) {
      for (const path of ['/auth?signin=redirect', '/auth']) {
        const reply = await instance.client.get(path, { ...BROWSER, ...headers });
        expect([path, headers, reply.status, reply.headers.get('location')]).toEqual([path, headers, 401, null]);
      }
    }
    // A backslash path stays on the page's own host, where the allowlist admits it.
    const backslash = await auth.client.get('/auth?signin=redirect', { ...BROWSER, ...traefik(PAGE), 'x-forwarded-uri': '/\\evil.example/phish' });
    expect(backslash.headers.get('location') ?? '').not.toContain(encodeURIComponent('https://evil.example'));
  });

  it('should refuse an unknown signin mode with 400 (a typo in a proxy configuration shows at once)', async () => {
    expect((await auth.client.get('/auth?signin=yes', BROWSER)).status).toBe(400);
    expect((await auth.client.get('/auth?signin=redirect&signin=redirect', { cookie })).status).toBe(200);
  });

  it('GET /signin should refuse a missing or foreign rd with 400 and never redirect', async () => {
    for (const path of ['/signin', '/signin?rd=', `/signin?rd=${encodeURIComponent('https://evil.example/')}`, `/signin?rd=${encodeURIComponent('//evil.example/')}`, `/signin?rd=${encodeURIComponent(`https://user@${new URL(ALLOWED_ORIGIN).host}/`)}`]) {
      const reply = await auth.client.get(path, { ...BROWSER, cookie });
      expect([path, reply.status, reply.headers.get('location'), reply.cookies]).toEqual([path, 400, null, []]);
    }
  });

  it('GET /signin should send a browser with a live session straight back to rd, and one without to the sign-in page or to Keycloak', async () => {
    const rd = `/signin?rd=${encodeURIComponent(PAGE)}`;
    const signedIn = await auth.client.get(rd, { ...BROWSER, cookie });
    expect([signedIn.status, signedIn.headers.get('location'), signedIn.cookies]).toEqual([302, PAGE, []]);

    const toPage = await withPage.client.get(rd, BROWSER);
    expect(toPage.status).toBe(302);
    const page = new URL(toPage.headers.get('location')!);
    expect(`${page.origin}${page.pathname}`).toBe(`${ALLOWED_ORIGIN}/sign-in`);
    expect(Object.fromEntries(page.searchParams)).toEqual({ theme: 'dark', rd: PAGE });

    const toKeycloak = await auth.client.get(rd, { ...BROWSER, cookie: 'TokenId=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA' });
    expect(toKeycloak.status).toBe(302);
    const authorization = new URL(toKeycloak.headers.get('location')!);
    expect(authorization.href.startsWith(`${issuer()}/protocol/openid-connect/auth?`)).toBe(true);
    const state = JSON.parse(Buffer.from(authorization.searchParams.get('state')!, 'base64url').toString('utf8')) as { redirectUri: string };
    expect(state.redirectUri).toBe(PAGE);
    expect(toKeycloak.cookies[0]).toMatch(/^login_[A-Za-z0-9_-]{16}=/);
  });
});
