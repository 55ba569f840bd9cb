import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { ALLOWED_ORIGIN, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { launchChromium, newBrowserContext } from './support/chromium.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';
import { keycloakAdmin } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';

/**
 * Login CSRF in a real browser: a login an attacker started in their own browser, carried as its
 * /redirect URL into a victim's browser, must not log the victim in as the attacker.
 */
describe('browser login bound to the browser that started it (headless Chromium)', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let browser: Browser;
  const admin = keycloakAdmin();
  const attacker = { username: `attacker-${randomBytes(4).toString('hex')}`, password: randomBytes(12).toString('base64url'), phoneNumber: newPhoneNumber() };
  let attackerId: string;

  beforeAll(async () => {
    cacheService = await startCacheService();
    [auth, browser, attackerId] = await startAll<[RunningAuth, Browser, string]>([
      [startAuth(cacheService.address), (started) => started.close()],
      [launchChromium(), (started) => started.close()],
      [admin.createUser(attacker), (id) => admin.deleteUser(id)],
    ]);
  });

  afterAll(async () => {
    await browser.close();
    await admin.deleteUser(attackerId);
    await auth.close();
    await cacheService.close();
  });

  const newBrowser = (): Promise<BrowserContext> => newBrowserContext(browser);

  /**
   * Signs in on Keycloak's real login page and returns the /redirect URL Keycloak sends the browser
   * to, without following it (route handlers do not see a redirect's next hop, so the login form's
   * answer itself is taken and replaced by a page of our own).
   */
  async function signInAndStopAtRedirect(page: Page): Promise<string> {
    let redirectUrl: string | undefined;
    await page.route('**/login-actions/authenticate**', async (route) => {
      const answer = await route.fetch({ maxRedirects: 0 });
      redirectUrl = answer.headers().location;
      await route.fulfill({ status: 200, contentType: 'text/plain', body: 'stopped before /redirect' });
    });
    await page.goto(`${auth.baseUrl}/login?${new URLSearchParams({ redirectUri: `${ALLOWED_ORIGIN}/home` }).toString()}`);
    await page.fill('#username', attacker.username);
    await page.fill('#password', attacker.password);
    await Promise.all([page.waitForURL('**/login-actions/authenticate**'), page.click('#kc-login')]);
    expect(redirectUrl).toMatch(new RegExp(`^${auth.baseUrl}/redirect\\?.*code=`));
    return redirectUrl!;
  }

  const sessionCookies = async (context: BrowserContext) => (await context.cookies(auth.baseUrl)).filter((cookie) => cookie.name === 'TokenId');

  it('should refuse the /redirect URL in another browser (400, no cookie) and let the starting browser finish', async () => {
    const attackerBrowser = await newBrowser();
    const victimBrowser = await newBrowser();
    try {
      const redirectUrl = await signInAndStopAtRedirect(await attackerBrowser.newPage());
      expect(await sessionCookies(attackerBrowser)).toEqual([]);

      const victimPage = await victimBrowser.newPage();
      const refused = await victimPage.goto(redirectUrl);
      expect(refused?.status()).toBe(400);
      expect(JSON.parse(await refused!.text())).toEqual({ error: 'the login was not started in this browser' });
      expect(await sessionCookies(victimBrowser)).toEqual([]);
      expect(victimPage.url()).toBe(redirectUrl);

      // The browser that started the login still can finish it: the refusal did not use the state up.
      // (The client application's host does not exist here: the browser stops after the 302.)
      const attackerPage = await attackerBrowser.newPage();
      const [finished] = await Promise.all([attackerPage.waitForResponse(redirectUrl), attackerPage.goto(redirectUrl).catch(() => undefined)]);
      expect(finished.status()).toBe(302);
      expect(finished.headers().location).toBe(`${ALLOWED_ORIGIN}/home`);
      const [session] = await sessionCookies(attackerBrowser);
      expect(session).toMatchObject({ httpOnly: true, secure: true, sameSite: 'Lax' });
      expect(await auth.cache.get(`token:${session!.value}`)).toMatchObject({ subject: attackerId, phoneNumber: attacker.phoneNumber });
      // The binding cookie went with the login.
      expect((await attackerBrowser.cookies(`${auth.baseUrl}/redirect`)).filter((cookie) => cookie.name.startsWith('login_'))).toEqual([]);
    } finally {
      await Promise.all([attackerBrowser.close(), victimBrowser.close()]);
    }
  }, HANG_GUARD_MS);
});
