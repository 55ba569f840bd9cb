import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { decodeJwt, decodeProtectedHeader, generateKeyPair, SignJWT } from 'jose';
import type { RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually, sleep } from '../../../test/support/eventually.js';
import type { EventCollector } from '../../../test/support/kafka.js';
import type { TokenRecord } from '../src/sessions/token-store.js';
import { counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { startBackchannelFront, type BackchannelFront } from './support/backchannel-front.js';
import { BACKCHANNEL_LOGOUT_EVENT, LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS } from '../src/oidc/logout-token.js';
import { addPassiveRealmKey, createAuthClientCopy, deleteUsersNamed, issuer, keycloakAdmin, signOutUser, type PassiveRealmKey } from './support/keycloak.js';
import { otpLogin } from './support/otp-login.js';
import { startReplicaPair, type ReplicaPair } from './support/replica-pair.js';
import { newPhoneNumber } from './support/phones.js';

const form = (token: string) => ({ headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ logout_token: token }).toString() });

describe('OIDC back-channel logout from Keycloak, two auth replicas on two cache replicas of one Redis', () => {
  let pair: ReplicaPair;
  let caches: RunningCacheService[];
  let events: EventCollector;
  let client: Awaited<ReturnType<typeof createAuthClientCopy>>;
  let authA: RunningAuth;
  let authB: RunningAuth;
  let front: BackchannelFront;
  const phoneNumbers: string[] = [];

  beforeAll(async () => {
    // A Keycloak client of the test's own, whose back-channel URL is A's front (known once A listens).
    const clientId = `platform-auth-bcl-${randomUUID().slice(0, 8)}`;
    pair = await startReplicaPair('auth-bcl', { Oidc__ClientId: clientId, Oidc__ClientSecret: `${clientId}-secret`, Otp__ResendCooldownSeconds: '0' });
    ({ caches, events, a: authA, b: authB } = pair);
    front = await startBackchannelFront(authA);
    client = await createAuthClientCopy(clientId, { 'backchannel.logout.url': front.url, 'backchannel.logout.session.required': 'true' });
  }, 60_000);

  afterAll(async () => {
    await client?.remove();
    await front?.close();
    await pair.close();
    await deleteUsersNamed(phoneNumbers);
  });

  async function login(): Promise<{ cookie: string; userId: string; record: TokenRecord }> {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const cookie = await otpLogin(authB, events, phoneNumber, { 'x-forwarded-for': `198.51.100.${phoneNumbers.length}` });
    const record = (await authA.cache.get(`token:${cookie.slice('TokenId='.length)}`)) as TokenRecord;
    const [user] = await keycloakAdmin().usersNamed(phoneNumber);
    return { cookie, userId: user!.id, record };
  }
  const statuses = async (cookie: string): Promise<number[]> => [(await authA.client.get('/auth', { cookie })).status, (await authB.client.get('/auth', { cookie })).status];
  const endedEverywhere = async (cookie: string, since: number): Promise<number> => {
    await eventually(async () => JSON.stringify(await statuses(cookie)) === '[401,401]', 2000, 'a 401 on every replica');
    return performance.now() - since;
  };

  it('should end the session on every replica within 2 s when the user is signed out through the admin API', async () => {
    // The metrics exist before the first token, at 0.
    expect(await authB.registry.metrics()).toMatch(/^auth_backchannel_logouts_total\{[^}]*result="invalid"[^}]*\} 0$/m);
    expect(await authB.registry.metrics()).toMatch(/^auth_sessions_ended_total\{[^}]*reason="backchannel"[^}]*\} 0$/m);
    const { cookie, userId, record } = await login();
    expect(record.idpSessionId).toEqual(expect.any(String));
    expect(await statuses(cookie)).toEqual([200, 200]);
    const other = await login(); // another user's session stays
    const started = performance.now();
    await signOutUser(userId);
    const tookMs = await endedEverywhere(cookie, started);
    expect(front.answers.at(-1)).toBe(200);
    expect(await counterValue(authA.registry, 'auth_sessions_ended_total', { reason: 'backchannel' })).toBeGreaterThanOrEqual(1);
    expect(await statuses(other.cookie)).toEqual([200, 200]);
    process.stdout.write(`back-channel logout (admin API): 401 on both replicas ${tookMs.toFixed(0)} ms after the sign-out was asked for\n`);
  }, 60_000);

  it('should end the session on every replica within 2 s when it is ended at the end-session endpoint', async () => {
    const { cookie, record } = await login();
    expect(await statuses(cookie)).toEqual([200, 200]);
    const started = performance.now();
    // The end-session (logout) endpoint, as a confidential client with the session's refresh token.
    const response = await fetch(`${issuer()}/protocol/openid-connect/logout`, {
      method: 'POST',
      body: new URLSearchParams({ client_id: client.clientId, client_secret: client.secret, refresh_token: record.refreshToken! }),
    });
    expect(response.status).toBe(204);
    const tookMs = await endedEverywhere(cookie, started);
    process.stdout.write(`back-channel logout (end-session endpoint): 401 on both replicas ${tookMs.toFixed(0)} ms after the logout was asked for\n`);
  }, 60_000);

  describe('invalid logout tokens', () => {
    let held: string;
    let session: { cookie: string; userId: string; record: TokenRecord };

    beforeAll(async () => {
      // A real Logout Token from Keycloak for a live session, held back from the service.
      session = await login();
      front.forwarding = false;
      const seen = front.tokens.length;
      await signOutUser(session.userId);
      held = await eventually(() => front.tokens[seen], 5000, 'the logout token');
      front.forwarding = true;
      expect(await statuses(session.cookie)).toEqual([200, 200]);
    }, 60_000);

    const refused = async (auth: RunningAuth, token: string): Promise<string> => {
      const reply = await auth.client.request('POST', '/backchannel-logout', form(token));
      expect(reply.status).toBe(400);
      expect(await statuses(session.cookie)).toEqual([200, 200]);
      return reply.json<{ error: string }>().error;
    };

    it('should refuse a forged token (another key, alg none, a changed payload) and end nothing', async () => {
      const claims = decodeJwt(held);
      const header = decodeProtectedHeader(held);
      // The realm's own algorithm and key id, another key: only the signature is wrong.
      const { privateKey } = await generateKeyPair(header.alg!);
      const forged = await new SignJWT(claims).setProtectedHeader({ alg: header.alg!, kid: header.kid!, typ: header.typ! }).sign(privateKey);
      expect(await refused(authA, forged)).toMatch(/invalid logout token/);
      const none = `${Buffer.from(JSON.stringify({ alg: 'none' })).toString('base64url')}.${held.split('.')[1]}.`;
      expect(await refused(authA, none)).toMatch(/invalid logout token/);
      const [head, , signature] = held.split('.');
      const widened = Buffer.from(JSON.stringify({ ...claims, sid: undefined })).toString('base64url');
      expect(await refused(authB, `${head}.${widened}.${signature}`)).toMatch(/invalid logout token/);
      expect(await refused(authA, 'not-a-jwt')).toMatch(/invalid logout token/);
      expect((await authA.client.request('POST', '/backchannel-logout', { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '' })).status).toBe(400);
    });

    it('should refuse the real token sent to a service of another audience, and end nothing', async () => {
      // The same realm, the shared platform-auth client: Keycloak's token is addressed to the test's client.
      const other = await startAuth(caches[0]!.address);
      try {
        expect(await refused(other, held)).toMatch(/aud/);
      } finally {
        await other.close();
      }
    });

    it('should refuse the real token once older than Oidc__BackchannelLogoutMaxAgeSeconds, and end nothing', async () => {
      const strict = await startAuth(caches[1]!.address, { Oidc__ClientId: client.clientId, Oidc__ClientSecret: client.secret, Oidc__BackchannelLogoutMaxAgeSeconds: '1' });
      try {
        // 1 s of age, 5 s of clock tolerance.
        const issuedAt = decodeJwt(held).iat! * 1000;
        await sleep(Math.max(0, issuedAt + 7000 - Date.now()));
        expect(await refused(strict, held)).toMatch(/expired/);
      } finally {
        await strict.close();
      }
    }, 30_000);

    it('should accept the real token once, ending the session everywhere, and refuse it replayed on any replica', async () => {
      // Still within the default 120 s: the refusals above spent nothing.
      const accepted = await authB.client.request('POST', '/backchannel-logout', form(held));
      expect(accepted.status).toBe(200);
      expect(await statuses(session.cookie)).toEqual([401, 401]);
      const again = await login();
      for (const auth of [authA, authB]) {
        const replay = await auth.client.request('POST', '/backchannel-logout', form(held));
        expect(replay.status).toBe(400);
        expect(replay.json<{ error: string }>().error).toMatch(/already used/);
      }
      expect(await statuses(again.cookie)).toEqual([200, 200]);
      expect(await counterValue(authA.registry, 'auth_backchannel_logouts_total', { result: 'invalid' })).toBeGreaterThanOrEqual(5);
      expect(await counterValue(authB.registry, 'auth_backchannel_logouts_total', { result: 'accepted' })).toBe(1);
    }, 30_000);
  });

  describe('audiences and clock tolerance (tokens signed by a passive realm key of the test\'s own)', () => {
    let key: PassiveRealmKey;
    let fresh: RunningAuth;

    beforeAll(async () => {
      key = await addPassiveRealmKey();
      // An instance that has not fetched the realm's keys yet (jose refetches for an unknown kid
      // only 30 s after its last fetch), on the pair's Redis: what it ends, ends on both replicas.
      fresh = await startAuth(caches[0]!.address, { Oidc__ClientId: client.clientId, Oidc__ClientSecret: client.secret });
    }, 30_000);

    afterAll(async () => {
      await fresh?.close();
      await key?.remove();
    });

    /** A Logout Token as Keycloak makes them, with `claims` on top, issued `skewSeconds` ahead of now. */
    const logoutToken = (claims: Record<string, unknown>, skewSeconds = 0): Promise<string> =>
      new SignJWT({ events: { [BACKCHANNEL_LOGOUT_EVENT]: {} }, jti: randomUUID(), ...claims })
        .setProtectedHeader({ alg: 'RS256', kid: key.kid, typ: 'logout+jwt' })
        .setIssuer(issuer())
        .setIssuedAt(Math.floor(Date.now() / 1000) + skewSeconds)
        .sign(key.privateKey);
    const post = async (token: string) => {
      const reply = await fresh.client.request('POST', '/backchannel-logout', form(token));
      return { status: reply.status, error: reply.status === 200 ? undefined : reply.json<{ error: string }>().error };
    };

    it('should refuse a token whose aud also names another audience, ending nothing, and accept the same claims addressed to this client alone', async () => {
      const { cookie, userId, record } = await login();
      const named = { sub: userId, sid: record.idpSessionId };
      for (const aud of [[client.clientId, 'another-client'], ['another-client', client.clientId]]) {
        expect(await post(await logoutToken({ ...named, aud }))).toEqual({ status: 400, error: expect.stringMatching(/aud/) });
        expect(await statuses(cookie)).toEqual([200, 200]);
      }
      expect(await post(await logoutToken({ ...named, aud: [client.clientId] }))).toEqual({ status: 200, error: undefined });
      expect(await statuses(cookie)).toEqual([401, 401]);
    });

    it(`should accept a token issued up to ${LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS} s ahead of this clock, and refuse one 30 s ahead`, async () => {
      const aud = client.clientId;
      expect(await post(await logoutToken({ sub: randomUUID(), aud }, LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS - 1))).toEqual({ status: 200, error: undefined });
      expect(await post(await logoutToken({ sub: randomUUID(), aud }, 30))).toEqual({ status: 400, error: expect.stringMatching(/iat/) });
    });
  });
});
