import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page, Response } from 'playwright-core';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { startAll } from '../../../test/support/start-all.js';
import { startAuth, type RunningAuth } from './support/auth-fixture.js';
import { launchChromium, newBrowserContext } from './support/chromium.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';
import { deleteUsersNamed } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';

/** A page that posts a form to `action` as soon as it loads, as a page of any site can. */
const autoPostingPage = (action: string): string => `<!doctype html><form method="post" action="${action}"></form><script>document.forms[0].submit()</script>`;

/**
 * Logout CSRF in a real browser: a page of another site posts a form to /logout. The browser does
 * not send the SameSite=Lax cookie with it; the answer must not clear the cookie of a session that
 * stays live.
 */
describe('POST /logout from a page of another site (headless Chromium)', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let events: EventCollector;
  let browser: Browser;
  const phoneNumbers: string[] = [];

  beforeAll(async () => {
    cacheService = await startCacheService();
    [auth, events, browser] = await startAll<[RunningAuth, EventCollector, Browser]>([
      [startAuth(cacheService.address), (started) => started.close()],
      [collectEvents(['notifications']), (started) => started.close()],
      [launchChromium(), (started) => started.close()],
    ]);
  });

  afterAll(async () => {
    await browser?.close();
    await events?.close();
    await auth?.close();
    await cacheService?.close();
    await deleteUsersNamed(phoneNumbers);
  });

  /** A browser profile signed in by an OTP login made through its own cookie store (the service's Set-Cookie lands there). */
  async function signedInBrowser(): Promise<{ context: BrowserContext; tokenId: string }> {
    const context = await newBrowserContext(browser);
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const headers = { 'x-forwarded-for': `198.51.100.${phoneNumbers.length}` };
    expect((await context.request.post(`${auth.baseUrl}/otp`, { data: { phoneNumber }, headers })).status()).toBe(200);
    const sms = await events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
    const verified = await context.request.post(`${auth.baseUrl}/otp/verify`, { data: { phoneNumber, code: String(sms.value.code) }, headers: { ...headers, 'x-role-claim': 'subscriber' } });
    expect(verified.status()).toBe(200);
    const [cookie] = await sessionCookies(context);
    expect(cookie).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' });
    return { context, tokenId: cookie!.value };
  }

  const sessionCookies = async (context: BrowserContext) => (await context.cookies(auth.baseUrl)).filter((cookie) => cookie.name === 'TokenId');
  const forwardAuth = async (tokenId: string): Promise<number> => (await auth.client.get('/auth', { cookie: `TokenId=${tokenId}` })).status;
  /** GET /auth from the browser profile, with whatever cookie it holds now. */
  const browserAuth = async (context: BrowserContext): Promise<number> => (await context.request.get(`${auth.baseUrl}/auth`)).status();

  /** Opens `pageUrl` (served by the test) whose form posts to /logout; resolves with the answer to that post. */
  async function postLogoutFrom(page: Page, pageUrl: string): Promise<Response> {
    await page.route(pageUrl, (route) => route.fulfill({ status: 200, contentType: 'text/html', body: autoPostingPage(`${auth.baseUrl}/logout`) }));
    // A 204 to the form's navigation leaves the page where it is: its load is not waited for.
    const [answer] = await Promise.all([page.waitForResponse(`${auth.baseUrl}/logout`), page.goto(pageUrl, { waitUntil: 'commit' })]);
    return answer;
  }

  it('should keep the cookie and the session when a page of another site posts the logout form', async () => {
    const { context, tokenId } = await signedInBrowser();
    try {
      const answer = await postLogoutFrom(await context.newPage(), 'https://attacker.example/');
      // A top-level form post from another site (so the SameSite=Lax cookie stays in the browser).
      expect((await answer.request().allHeaders()).origin).toBe('https://attacker.example');
      expect(answer.status()).toBe(204);
      // Still signed in, in the browser and on the server: the answer left the cookie alone.
      expect({ browser: await browserAuth(context), cookies: (await sessionCookies(context)).map((cookie) => cookie.value), server: await forwardAuth(tokenId) }).toEqual({
        browser: 200,
        cookies: [tokenId],
        server: 200,
      });
      expect(await answer.headerValue('set-cookie')).toBeNull();
    } finally {
      await context.close();
    }
  }, HANG_GUARD_MS);

  it('should end the session and clear the cookie when a page of the service\'s own origin posts it', async () => {
    const { context, tokenId } = await signedInBrowser();
    try {
      const answer = await postLogoutFrom(await context.newPage(), `${auth.baseUrl}/signed-in-page`);
      expect((await answer.request().allHeaders()).origin).toBe(auth.baseUrl);
      expect(answer.status()).toBe(204);
      expect(await browserAuth(context)).toBe(401);
      expect(await sessionCookies(context)).toEqual([]);
      expect(await forwardAuth(tokenId)).toBe(401);
    } finally {
      await context.close();
    }
  }, HANG_GUARD_MS);
});
