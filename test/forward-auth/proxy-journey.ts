import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext } from 'playwright-core';
import { Agent, fetch } from 'undici';
import { testCertificate } from '../../services/auth/test/support/auth-fixture.js';
import { launchChromium, newBrowserContext } from '../../services/auth/test/support/chromium.js';
import { keycloakAdmin } from '../../services/auth/test/support/keycloak.js';
import { newPhoneNumber } from '../../services/auth/test/support/phones.js';
import { startReplicaPair, type ReplicaPair } from '../../services/auth/test/support/replica-pair.js';
import { freePort } from '../support/free-port.js';
import { HANG_GUARD_MS } from '../support/progress.js';
import { startAll } from '../support/start-all.js';
import { API, BROWSER, forged, identityAt, PAGE_PATH } from './client-requests.js';
import { startDemoUpstream, type DemoUpstream } from './demo-upstream.js';
import type { RunningProxy, StartProxy } from './proxies.js';

/**
 * The forward-auth journey through one real reverse proxy, configured by its file in
 * docs/forward-auth/ (issue 43): two auth replicas on one Redis-backed cache, a demo upstream,
 * headless Chromium signing in through the proxy by OTP and through Keycloak.
 */
export function forwardAuthJourney(name: string, startProxy: StartProxy): void {
  describe(`forward-auth through ${name}`, () => {
    let pair: ReplicaPair;
    let upstream: DemoUpstream;
    let proxy: RunningProxy;
    let browser: Browser;
    let dispatcher: Agent;
    let page: string;
    const admin = keycloakAdmin();
    const webUser = { username: `fa-${randomBytes(4).toString('hex')}`, password: randomBytes(12).toString('base64url'), phoneNumber: newPhoneNumber(), locale: 'en' };
    let webUserId: string;

    const get = (path: string, headers: Record<string, string>) => fetch(`${proxy.baseUrl}${path}`, { headers, redirect: 'manual', dispatcher });

    beforeAll(async () => {
      const { cert, key } = await testCertificate();
      dispatcher = new Agent({ connect: { ca: cert } });
      const port = await freePort();
      const base = `https://127.0.0.1:${port}`;
      page = `${base}${PAGE_PATH}`;
      [pair, upstream, browser, webUserId] = await startAll<[ReplicaPair, DemoUpstream, Browser, string]>([
        [
          startReplicaPair(`forward-auth-${name}`, {
            Auth__PublicBaseUrl: `${base}/sso`,
            Auth__AllowedRedirectUris: base,
            Auth__SignInPageUrl: `${base}/sign-in`,
            Auth__TrustProxy: 'true',
          }),
          (started) => started.close(),
        ],
        [startDemoUpstream(), (started) => started.close()],
        [launchChromium(), (started) => started.close()],
        [admin.createUser(webUser), (id) => admin.deleteUser(id)],
      ]);
      const authPorts = [pair.a, pair.b].map((replica) => Number(new URL(replica.baseUrl).port));
      proxy = await startProxy({ port, authPorts, upstreamPort: upstream.port, cert, key });
    }, 120_000);

    afterAll(async () => {
      await proxy?.stop();
      await browser?.close();
      await admin.deleteUser(webUserId).catch(() => undefined);
      await Promise.all([pair?.close(), upstream?.close()]);
      await dispatcher?.close();
    });

    /** A fresh browser profile (no cookies) that trusts the test certificate. */
    const newContext = (): Promise<BrowserContext> => newBrowserContext(browser);
    const tokenIdOf = async (context: BrowserContext): Promise<string> => {
      const cookies = await context.cookies(proxy.baseUrl);
      const tokenId = cookies.find((cookie) => cookie.name === 'TokenId')?.value;
      if (tokenId === undefined) throw new Error(`no TokenId cookie: ${JSON.stringify(cookies.map((cookie) => cookie.name))}`);
      return tokenId;
    };

    it('should answer an API client without a session with 401, and send nothing to the upstream', async () => {
      const before = upstream.seen.length;
      for (const headers of [API, { accept: '*/*' }, { ...API, ...forged(page), authorization: 'Bearer forged' }]) {
        const answer = await get(PAGE_PATH, headers);
        expect([answer.status, answer.headers.get('location')]).toEqual([401, null]);
        await answer.arrayBuffer();
      }
      expect(upstream.seen.length).toBe(before);
    });

    it('should send a browser without a session to sign in, with the page it asked for, and send nothing to the upstream', async () => {
      const before = upstream.seen.length;
      for (const headers of [BROWSER, { ...BROWSER, ...forged(page) }]) {
        const answer = await get(PAGE_PATH, headers);
        expect(answer.status).toBe(302);
        expect(answer.headers.get('location')).toBe(`${proxy.baseUrl}/sso/signin?rd=${encodeURIComponent(page)}`);
        await answer.arrayBuffer();
      }
      expect(upstream.seen.length).toBe(before);
      // The sign-in entry sends it on to the sign-in page, the page still in rd.
      const signin = await get(`/sso/signin?rd=${encodeURIComponent(page)}`, BROWSER);
      expect([signin.status, signin.headers.get('location')]).toEqual([302, `${proxy.baseUrl}/sign-in?rd=${encodeURIComponent(page)}`]);
      // And never to a page off the allowlist.
      const foreign = await get(`/sso/signin?rd=${encodeURIComponent('https://evil.example/')}`, BROWSER);
      expect([foreign.status, foreign.headers.get('location')]).toEqual([400, null]);
    });

    it('should keep GET /auth, which carries the access token, away from the browser', async () => {
      const answer = await get('/sso/auth', BROWSER);
      expect(answer.status).toBe(404);
      expect(answer.headers.get('authorization')).toBeNull();
    });

    it('should let Chromium sign in by OTP through the proxy, land on the page it first asked for, and hand the upstream the identity, not the client\'s', async () => {
      const context = await newContext();
      try {
        const tab = await context.newPage();
        const phoneNumber = newPhoneNumber();
        await tab.goto(page);
        expect(tab.url()).toBe(`${proxy.baseUrl}/sign-in?rd=${encodeURIComponent(page)}`);
        await tab.fill('#phone', phoneNumber);
        await tab.click('#send');
        const sms = await pair.events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
        await tab.fill('#code', String(sms.value.code));
        await Promise.all([tab.waitForURL(page), tab.click('#verify')]);
        expect(await tab.textContent('#page')).toBe(PAGE_PATH);
        expect(await tab.textContent('#phone')).toBe(phoneNumber);
        expect(await tab.textContent('#role')).toBe('subscriber');

        const tokenId = await tokenIdOf(context);
        const record = (await pair.a.cache.get(`token:${tokenId}`)) as { subject: string };
        const expected = { user: record.subject, phone: phoneNumber, groups: 'subscribers', role: 'subscriber', bearer: true, underscored: [] };
        expect(identityAt(upstream.seen.at(-1))).toEqual(expected);

        // A live session with everything a client can write: still the session's identity.
        const before = upstream.seen.length;
        const answer = await get(PAGE_PATH, { ...API, ...forged(page), cookie: `TokenId=${tokenId}`, authorization: 'Bearer forged' });
        expect(answer.status).toBe(200);
        await answer.arrayBuffer();
        expect(upstream.seen.length).toBe(before + 1);
        expect(identityAt(upstream.seen.at(-1))).toEqual(expected);
        // Headers that rewrite the path in some frameworks: a client's never reach the application.
        expect(upstream.seen.at(-1)!.headers['x-original-url']).toBeUndefined();
        expect(upstream.seen.at(-1)!.headers['x-rewrite-url']).toBeUndefined();
      } finally {
        await context.close();
      }
    }, HANG_GUARD_MS);

    it('should let Chromium sign in through Keycloak (OIDC) via the proxy and land on the page it first asked for', async () => {
      const context = await newContext();
      try {
        const tab = await context.newPage();
        await tab.goto(page);
        await Promise.all([tab.waitForURL('**/protocol/openid-connect/auth**'), tab.click('#keycloak')]);
        await tab.fill('#username', webUser.username);
        await tab.fill('#password', webUser.password);
        await Promise.all([tab.waitForURL(page), tab.click('#kc-login')]);
        expect(await tab.textContent('#page')).toBe(PAGE_PATH);
        expect(await tab.textContent('#phone')).toBe(webUser.phoneNumber);
        // No groups: the empty headers replace whatever a client sent, and the proxy passes none on.
        expect(identityAt(upstream.seen.at(-1))).toEqual({ user: webUserId, phone: webUser.phoneNumber, groups: undefined, role: undefined, bearer: true, underscored: [] });
      } finally {
        await context.close();
      }
    }, HANG_GUARD_MS);

    it('should refuse a session at once, through the proxy and on both auth replicas, after it logged out', async () => {
      const context = await newContext();
      try {
        const tab = await context.newPage();
        const phoneNumber = newPhoneNumber();
        await tab.goto(page);
        await tab.fill('#phone', phoneNumber);
        await tab.click('#send');
        const sms = await pair.events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
        await tab.fill('#code', String(sms.value.code));
        await Promise.all([tab.waitForURL(page), tab.click('#verify')]);
        const cookie = `TokenId=${await tokenIdOf(context)}`;
        for (const replica of [pair.a, pair.b]) expect((await replica.client.get('/auth', { cookie })).status).toBe(200);

        const loggedOut = await tab.evaluate(async () => (await fetch('/sso/logout', { method: 'POST' })).status);
        expect(loggedOut).toBe(204);
        // At once: no waiting. Several requests, so both replicas behind the proxy answer some.
        for (let i = 0; i < 6; i++) {
          const answer = await get(PAGE_PATH, { ...API, cookie });
          expect(answer.status).toBe(401);
          await answer.arrayBuffer();
        }
        for (const replica of [pair.a, pair.b]) expect((await replica.client.get('/auth', { cookie })).status).toBe(401);
        await tab.goto(page);
        expect(tab.url()).toBe(`${proxy.baseUrl}/sign-in?rd=${encodeURIComponent(page)}`);
      } finally {
        await context.close();
      }
    }, HANG_GUARD_MS);
  });
}
