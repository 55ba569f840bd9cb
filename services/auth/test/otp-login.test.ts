import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { capturingLogger, counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import { cookieValue } from './support/https-client.js';
import { keycloakAdmin, passwordAccepted, userinfo } from './support/keycloak.js';
import { formatted, newPhoneNumber } from './support/phones.js';

describe('OTP login against real Keycloak, Kafka and cache service', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let events: EventCollector;
  const admin = keycloakAdmin();
  const createdUsers: string[] = [];
  const logLines: string[] = [];

  beforeAll(async () => {
    cacheService = await startCacheService();
    // Production (the default): the code travels only in the SMS event. No resend cooldown, so
    // one number can log in twice in a row (the limits have their own tests).
    auth = await startAuth(cacheService.address, { Otp__ResendCooldownSeconds: '0', Log__Level: 'debug' }, capturingLogger(logLines));
    events = await collectEvents(['notifications', 'user-authentication']);
  });

  afterAll(async () => {
    await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
    await events.close();
    await auth.close();
    await cacheService.close();
  });

  const seenSms = new Set<string>();

  /** POST /otp, then the code from the (next) SendSmsNotificationEvent consumed from Kafka. */
  async function requestCode(phoneNumber: string, headers: Record<string, string> = {}): Promise<string> {
    const issued = await auth.client.post('/otp', { phoneNumber: formatted(phoneNumber) }, { 'x-forwarded-for': '198.51.100.1', ...headers });
    expect(issued.status).toBe(200);
    expect(issued.json()).toEqual({});
    const sms = await events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber && !seenSms.has(event.headers.ce_id!));
    seenSms.add(sms.headers.ce_id!);
    return String(sms.value.code);
  }

  it('should log in by the code from the SMS event, provision the user and serve its token through /auth', async () => {
    const phoneNumber = newPhoneNumber();
    const code = await requestCode(phoneNumber, { 'accept-language': 'fr-CH, de;q=0.5' });
    const sms = events.events.find((event) => event.topic === 'notifications' && event.key === phoneNumber)!;
    expect(sms.value).toEqual({ phoneNumber, resourceKey: 'Otp.LoginCode', code, locale: 'fr' });
    expectEventPayload('SendSmsNotificationEvent', sms.value);
    expect(sms.headers).toMatchObject({ ce_type: 'SendSmsNotificationEvent', ce_specversion: '1.0', ce_source: '/subscription-platform/auth', 'content-type': 'application/json' });

    const verified = await auth.client.post('/otp/verify', { phoneNumber, code, locale: 'de' }, { 'x-role-claim': 'client' });
    expect(verified.status).toBe(200);
    expect(verified.json()).toEqual({});
    expect(verified.cookies).toHaveLength(1);
    const cookie = verified.cookies[0]!;
    expect(cookie).toMatch(/^TokenId=[A-Za-z0-9_-]{43}; /);
    const attributes = cookie.split('; ').slice(1);
    expect(attributes).toEqual(expect.arrayContaining(['HttpOnly', 'Secure', 'SameSite=Lax', 'Path=/']));
    expect(Number(/Max-Age=(\d+)/.exec(cookie)?.[1])).toBeGreaterThan(250);
    expect(verified.text).not.toContain('eyJ');

    const [user, ...others] = await admin.usersNamed(phoneNumber);
    expect(others).toHaveLength(0);
    createdUsers.push(user!.id);
    expect(user!.attributes).toMatchObject({ phoneNumber: [phoneNumber], locale: ['de'] });
    expect(await admin.groupsOf(user!.id)).toEqual(['clients']);
    // Provisioned without any credential: nothing was set, hashed or stored for the login.
    expect(await admin.credentialTypesOf(user!.id)).toEqual([]);

    const login = await events.waitFor((event) => event.topic === 'user-authentication' && event.key === phoneNumber);
    expect(login.value).toEqual({ phoneNumber, locale: 'de', userId: user!.id, method: 'otp', role: 'client' });
    expectEventPayload('UserLoggedInEvent', login.value);
    expect(login.headers).toMatchObject({ ce_type: 'UserLoggedInEvent', ce_specversion: '1.0', ce_source: '/subscription-platform/auth' });
    expect(login.headers.ce_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(Date.parse(login.headers.ce_time!)).not.toBeNaN();

    const forwarded = await auth.client.get('/auth', { cookie: `TokenId=${cookieValue(verified.cookies, 'TokenId')!}` });
    expect(forwarded.status).toBe(200);
    const bearer = /^Bearer (.+)$/.exec(forwarded.headers.get('authorization') ?? '')?.[1];
    expect(bearer).toBeDefined();
    const info = await userinfo(bearer!);
    expect(info.status).toBe(200);
    expect(info.claims).toMatchObject({ sub: user!.id, preferred_username: phoneNumber, phone_number: phoneNumber, locale: 'de' });
    expect(await counterValue(auth.registry, 'otp_issued_total')).toBeGreaterThanOrEqual(1);
    // The conversion the pumping alert watches: codes sent and codes entered right, by country.
    expect(await counterValue(auth.registry, 'auth_otp_sent_total', { country: 'DE' })).toBeGreaterThanOrEqual(1);
    expect(await counterValue(auth.registry, 'auth_otp_verified_total', { country: 'DE' })).toBeGreaterThanOrEqual(1);
    // Neither the code, the TokenId nor the token ever reaches the logs.
    const logs = logLines.join('\n');
    for (const secret of [code, cookieValue(verified.cookies, 'TokenId')!, bearer!]) expect(logs).not.toContain(secret);
    expect(await counterValue(auth.registry, 'logins_total', { method: 'otp', result: 'success' })).toBeGreaterThanOrEqual(1);
  });

  it('should reuse the existing user on a second login with its role, and leave its groups alone', async () => {
    const phoneNumber = newPhoneNumber();
    const first = await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'subscriber' });
    expect(first.status).toBe(200);
    const [user] = await admin.usersNamed(phoneNumber);
    createdUsers.push(user!.id);
    const second = await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'subscriber' });
    expect(second.status).toBe(200);
    expect(cookieValue(second.cookies, 'TokenId')).not.toBe(cookieValue(first.cookies, 'TokenId'));
    expect((await admin.usersNamed(phoneNumber)).map((candidate) => candidate.id)).toEqual([user!.id]);
    expect(await admin.groupsOf(user!.id)).toEqual(['subscribers']);
    const logins = await events.waitFor((event) => event.topic === 'user-authentication' && event.key === phoneNumber && event.value.role === 'subscriber');
    expect(logins.value.userId).toBe(user!.id);
  });

  it('should refuse a subscriber who claims the client role: 403, no cookie, groups unchanged', async () => {
    const phoneNumber = newPhoneNumber();
    expect((await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'subscriber' })).status).toBe(200);
    const [user] = await admin.usersNamed(phoneNumber);
    createdUsers.push(user!.id);
    const escalation = await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'client' });
    expect(escalation.status).toBe(403);
    expect(escalation.json()).toEqual({ error: 'this phone number belongs to an account of another role' });
    expect(cookieValue(escalation.cookies, 'TokenId')).toBeUndefined();
    expect(await admin.groupsOf(user!.id)).toEqual(['subscribers']);
    expect(await counterValue(auth.registry, 'logins_total', { method: 'otp', result: 'rejected' })).toBeGreaterThanOrEqual(1);
  });

  it('should log in the existing user who holds the number as an attribute, never creating a second one nor touching its password', async () => {
    const phoneNumber = newPhoneNumber();
    const username = `member-${phoneNumber.slice(1)}`;
    const id = await admin.createUser({ username, password: 'a-password-of-its-own', phoneNumber, groups: ['/clients'] });
    createdUsers.push(id);
    const login = await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'client' });
    expect(login.status).toBe(200);
    expect(await admin.usersNamed(phoneNumber)).toEqual([]);
    expect(await admin.usersWithPhone(phoneNumber)).toEqual([expect.objectContaining({ id, username })]);
    const logins = await events.waitFor((event) => event.topic === 'user-authentication' && event.key === phoneNumber);
    expect(logins.value.userId).toBe(id);
    // The OTP login sets no password: the one the user signs in with at Keycloak still works.
    expect(await passwordAccepted(username, 'a-password-of-its-own')).toBe(true);
    expect(await admin.credentialTypesOf(id)).toEqual(['password']);
  });

  it('should end the session on logout: cookie cleared, /auth 401, the token revoked at Keycloak', async () => {
    const phoneNumber = newPhoneNumber();
    const verified = await auth.client.post('/otp/verify', { phoneNumber, code: await requestCode(phoneNumber) }, { 'x-role-claim': 'subscriber' });
    createdUsers.push((await admin.usersNamed(phoneNumber))[0]!.id);
    const cookie = `TokenId=${cookieValue(verified.cookies, 'TokenId')!}`;
    const bearer = (await auth.client.get('/auth', { cookie })).headers.get('authorization')!.slice('Bearer '.length);

    const loggedOut = await auth.client.request('POST', '/logout', { headers: { cookie } });
    expect(loggedOut.status).toBe(204);
    expect(loggedOut.cookies).toEqual(['TokenId=; Max-Age=0; Path=/; HttpOnly; Secure; SameSite=Lax']);
    expect((await auth.client.get('/auth', { cookie })).status).toBe(401);
    // Revoking the refresh token ends the Keycloak session, and with it the access token.
    expect((await userinfo(bearer)).status).toBe(401);
    expect((await auth.client.request('POST', '/logout')).status).toBe(204);
  });

  it('should answer 401 on /auth without a cookie, with a malformed one and with an unknown one', async () => {
    for (const headers of [{}, { cookie: 'TokenId=nope' }, { cookie: `TokenId=${'A'.repeat(43)}` }] as Array<Record<string, string>>) {
      const reply = await auth.client.get('/auth', headers);
      expect(reply.status).toBe(401);
      expect(reply.json()).toEqual({ error: 'unauthorized' });
      expect(reply.headers.get('authorization')).toBeNull();
    }
  });
});
