import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { ALLOWED_ORIGIN, counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { signInAtKeycloak, startBrowserLogin } from './support/browser-login.js';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import { cookieValue, type Reply } from './support/https-client.js';
import { issuer, keycloakAdmin, userinfo } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { bindingCookieName } from '../src/http/login-binding.js';
import { startAll } from '../../../test/support/start-all.js';

function expectRefused(reply: Reply, message: string | RegExp): void {
  expect(reply.status).toBe(400);
  expect(reply.json().error).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
  expect(reply.headers.get('location')).toBeNull();
  expect(reply.cookies).toEqual([]);
}

describe('OIDC login (authorization code + PKCE) through Keycloak\'s real login page', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let shortState: RunningAuth;
  let events: EventCollector;
  const admin = keycloakAdmin();
  const user = { username: `web-${randomBytes(4).toString('hex')}`, password: randomBytes(12).toString('base64url'), phoneNumber: newPhoneNumber(), locale: 'es' };
  let userId: string;

  beforeAll(async () => {
    cacheService = await startCacheService();
    [auth, shortState, events, userId] = await startAll<[RunningAuth, RunningAuth, EventCollector, string]>([
      [startAuth(cacheService.address), (started) => started.close()],
      [startAuth(cacheService.address, { Oidc__StateTtlSeconds: '1' }), (started) => started.close()],
      [collectEvents(['user-authentication']), (started) => started.close()],
      [admin.createUser(user), (id) => admin.deleteUser(id)],
    ]);
  });

  afterAll(async () => {
    await admin.deleteUser(userId);
    await events.close();
    await Promise.all([auth.close(), shortState.close()]);
    await cacheService.close();
  });

  it('should log in through Keycloak and send the browser back to the original URI with the cookie', async () => {
    const redirectUri = `${ALLOWED_ORIGIN}/after/login?tab=plans`;
    const { authorizationUrl, reply: started, cookie } = await startBrowserLogin(auth.client, redirectUri);
    expect(started.cookies[0]).toMatch(/^login_[A-Za-z0-9_-]{16}=[A-Za-z0-9_-]{43}; Max-Age=300; Path=\/redirect; HttpOnly; Secure; SameSite=Lax$/);
    expect(authorizationUrl.href.startsWith(`${issuer()}/protocol/openid-connect/auth?`)).toBe(true);
    const query = authorizationUrl.searchParams;
    expect(query.get('code_challenge_method')).toBe('S256');
    expect(query.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(query.get('redirect_uri')).toBe(`${auth.baseUrl}/redirect`);
    expect(query.get('client_id')).toBe('platform-auth');
    const state = JSON.parse(Buffer.from(query.get('state')!, 'base64url').toString('utf8')) as { redirectUri: string; nonce: string };
    expect(state.redirectUri).toBe(redirectUri);
    expect(Buffer.from(state.nonce, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(await auth.cache.get(`oidc:${query.get('state')!}`)).toEqual({ verifier: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/), binding: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/) });

    const { redirectPath } = await signInAtKeycloak(authorizationUrl.href, user.username, user.password);
    expect(redirectPath).toMatch(/^\/redirect\?/);
    const back = await auth.client.get(redirectPath, cookie);
    expect(back.status).toBe(302);
    expect(back.headers.get('location')).toBe(redirectUri);
    const tokenId = cookieValue(back.cookies, 'TokenId');
    expect(back.cookies[0]).toMatch(/^TokenId=[A-Za-z0-9_-]{43}; Max-Age=\d+; Path=\/; HttpOnly; Secure; SameSite=Lax$/);
    // The binding cookie is cleared with the login.
    expect(back.cookies[1]).toMatch(/^login_[A-Za-z0-9_-]{16}=; Max-Age=0; Path=\/redirect; HttpOnly; Secure; SameSite=Lax$/);
    // The verifier was used up.
    expect(await auth.cache.get(`oidc:${query.get('state')!}`)).toBeUndefined();

    const cached = await auth.cache.get(`token:${tokenId!}`);
    expect(cached).toMatchObject({ subject: userId, phoneNumber: user.phoneNumber });
    const forwarded = await auth.client.get('/auth', { cookie: `TokenId=${tokenId!}` });
    expect(forwarded.status).toBe(200);
    const info = await userinfo(forwarded.headers.get('authorization')!.slice('Bearer '.length));
    expect(info.claims).toMatchObject({ sub: userId, preferred_username: user.username, phone_number: user.phoneNumber });

    const login = await events.waitFor((event) => event.key === user.phoneNumber);
    expect(login.value).toEqual({ phoneNumber: user.phoneNumber, locale: 'es', userId, method: 'oidc' });
    expectEventPayload('UserLoggedInEvent', login.value);
    expect(login.headers).toMatchObject({ ce_type: 'UserLoggedInEvent', ce_source: '/subscription-platform/auth' });
    expect(await counterValue(auth.registry, 'logins_total', { method: 'oidc', result: 'success' })).toBe(1);

    // The same callback again (a replayed state): refused.
    expectRefused(await auth.client.get(redirectPath, cookie), 'unknown, expired or already used state');
  });

  it('should refuse a missing or non-allowlisted redirectUri with 400 and no redirect', async () => {
    expectRefused(await auth.client.get('/login'), 'redirectUri is required');
    const refused = [
      'https://evil.example.test/',
      `${ALLOWED_ORIGIN}.evil.example.test/`,
      `https://app.example.test@evil.example.test/`,
      `https://user:pass@app.example.test/`,
      'http://app.example.test/',
      'https://other.example.test/application',
      'https://other.example.test/app/../admin',
      'javascript:alert(1)',
      '/relative/path',
      `${ALLOWED_ORIGIN}/${'x'.repeat(600)}`,
    ];
    for (const redirectUri of refused) {
      expectRefused(await auth.client.get(`/login?${new URLSearchParams({ redirectUri }).toString()}`), 'redirectUri is not allowed');
    }
    expectRefused(await auth.client.get(`/login?redirectUri=${encodeURIComponent(ALLOWED_ORIGIN)}&redirectUri=${encodeURIComponent(ALLOWED_ORIGIN)}`), 'redirectUri is required');
    // Prefix entries admit what lies under them.
    expect((await auth.client.get(`/login?redirectUri=${encodeURIComponent('https://other.example.test/app/home')}`)).status).toBe(302);
  });

  it('should refuse a forged state', async () => {
    const forged = Buffer.from(JSON.stringify({ redirectUri: `${ALLOWED_ORIGIN}/`, nonce: randomBytes(32).toString('base64url') })).toString('base64url');
    expectRefused(await auth.client.get(`/redirect?code=abc&state=${forged}`, { cookie: `${bindingCookieName(forged)}=${randomBytes(32).toString('base64url')}` }), 'unknown, expired or already used state');
    expectRefused(await auth.client.get(`/redirect?code=abc&state=${forged}`), 'the login was not started in this browser');
    expectRefused(await auth.client.get('/redirect?code=abc&state=not-json'), 'invalid state');
    expectRefused(await auth.client.get('/redirect?code=abc'), 'state is required');
    expect(await counterValue(auth.registry, 'logins_total', { method: 'oidc', result: 'rejected' })).toBeGreaterThanOrEqual(3);
  });

  it('should refuse an expired state', async () => {
    const { authorizationUrl, cookie } = await startBrowserLogin(shortState.client, `${ALLOWED_ORIGIN}/`);
    const { redirectPath } = await signInAtKeycloak(authorizationUrl.href, user.username, user.password);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expectRefused(await shortState.client.get(redirectPath, cookie), 'unknown, expired or already used state');
  });

  it('should refuse a login Keycloak reports as failed, using up its state', async () => {
    const { authorizationUrl, cookie } = await startBrowserLogin(auth.client, `${ALLOWED_ORIGIN}/`);
    const state = authorizationUrl.searchParams.get('state')!;
    expectRefused(await auth.client.get(`/redirect?error=access_denied&state=${state}&iss=${encodeURIComponent(issuer())}`, cookie), 'login failed: access_denied');
    expect(await auth.cache.get(`oidc:${state}`)).toBeUndefined();
  });

  it('should refuse the /redirect URL of a login started in another browser, and let the starting browser finish it', async () => {
    const { authorizationUrl, cookie } = await startBrowserLogin(auth.client, `${ALLOWED_ORIGIN}/`);
    const { redirectPath } = await signInAtKeycloak(authorizationUrl.href, user.username, user.password);
    // The victim's browser: no binding cookie, or the binding of a login of its own.
    expectRefused(await auth.client.get(redirectPath), 'the login was not started in this browser');
    const own = await startBrowserLogin(auth.client, `${ALLOWED_ORIGIN}/`);
    expectRefused(await auth.client.get(redirectPath, own.cookie), 'the login was not started in this browser');
    const state = new URL(redirectPath, auth.baseUrl).searchParams.get('state')!;
    const wrongSecret = `${bindingCookieName(state)}=${randomBytes(32).toString('base64url')}`;
    expectRefused(await auth.client.get(redirectPath, { cookie: wrongSecret }), 'the login was not started in this browser');
    const back = await auth.client.get(redirectPath, cookie);
    expect(back.status).toBe(302);
    expect(cookieValue(back.cookies, 'TokenId')).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
