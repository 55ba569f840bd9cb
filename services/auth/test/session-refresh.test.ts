import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { sleep } from '../../../test/support/eventually.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { cookieValue, type Reply } from './support/https-client.js';
import { authClient, deleteUsersNamed, introspect, keycloakAdmin, keycloakUrl, revokeAtKeycloak, userinfo } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { startTcpProxy } from '../../../test/support/tcp-proxy.js';
import { runningClock, type TestClock } from '../../../test/support/test-clock.js';
import { startAll } from '../../../test/support/start-all.js';

/** The realm's client with 30 s access tokens; every other client keeps the realm's 5 minutes. */
const shortLived = authClient('platform-auth-short-lived');
const shortLivedEnvironment = { Oidc__ClientId: shortLived.clientId, Oidc__ClientSecret: shortLived.secret };

const claimsOf = (accessToken: string): { exp: number; iat: number } => JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { exp: number; iat: number };

/** The `exp` claim of a JWT access token, in Unix ms. */
const expiryOf = (accessToken: string): number => claimsOf(accessToken).exp * 1000;

/** How long a JWT access token lives (`exp` - `iat`), in ms. */
const lifespanOf = (accessToken: string): number => (claimsOf(accessToken).exp - claimsOf(accessToken).iat) * 1000;

/**
 * The real pause between two rounds of requests while a test moves the replicas' clock: time for
 * a background renewal's calls (the cache service, Keycloak), which run in real time.
 */
const ROUND_PAUSE_MS = 100;

const bearerOf = (reply: Reply): string => reply.headers.get('authorization')!.slice('Bearer '.length);

describe('sessions: the access token renewed behind the TokenId cookie, lifetimes, logout', () => {
  let cacheService: RunningCacheService;
  /** Cache services on a test's clock (their entries expire on it), closed after the replicas. */
  const clockedCaches: RunningCacheService[] = [];

  /** A replica and a cache service of its own on one moving clock: session limits pass without waiting for them. */
  async function startOnClock(overrides: Record<string, string>): Promise<{ auth: RunningAuth; clock: TestClock }> {
    const clock = runningClock();
    const cache = await startCacheService({ now: clock.now });
    clockedCaches.push(cache);
    return { auth: await start(overrides, clock.now, cache.address), clock };
  }
  let events: EventCollector;
  const phoneNumbers: string[] = [];
  const started: RunningAuth[] = [];
  let clientIp = 0;

  beforeAll(async () => {
    [cacheService, events] = await startAll<[RunningCacheService, EventCollector]>([
      [startCacheService(), (started) => started.close()],
      [collectEvents(['notifications']), (started) => started.close()],
    ]);
  });

  afterAll(async () => {
    await Promise.all(started.map((started) => started.close()));
    await events.close();
    await Promise.all([cacheService, ...clockedCaches].map((started) => started.close()));
    await deleteUsersNamed(phoneNumbers);
  });

  async function start(overrides: Record<string, string> = {}, now?: () => number, cacheAddress = cacheService.address): Promise<RunningAuth> {
    const auth = await startAuth(cacheAddress, { Otp__ResendCooldownSeconds: '0', ...overrides }, undefined, now === undefined ? {} : { now });
    started.push(auth);
    return auth;
  }

  /** An OTP login of a new number (the code from its SMS event): the TokenId and the Set-Cookie line. */
  async function login(auth: RunningAuth): Promise<{ tokenId: string; cookie: string; setCookie: string }> {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const ip = { 'x-forwarded-for': `198.51.100.${++clientIp}` };
    expect((await auth.client.post('/otp', { phoneNumber }, ip)).status).toBe(200);
    const sms = await events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
    const verified = await auth.client.post('/otp/verify', { phoneNumber, code: String(sms.value.code) }, { ...ip, 'x-role-claim': 'subscriber' });
    expect(verified.status).toBe(200);
    const tokenId = cookieValue(verified.cookies, 'TokenId')!;
    return { tokenId, cookie: `TokenId=${tokenId}`, setCookie: verified.cookies[0]! };
  }

  /** When each token was first served, on the replicas' clock (see liveToken). */
  const firstServed = new Map<string, number>();

  /**
   * GET /auth, which must answer 200 with a token that has not expired when the answer arrives.
   * With the replicas' clock, also on that clock: a token was issued no later than it was first
   * served, so its life there ends at the latest its own lifespan after that.
   */
  async function liveToken(auth: RunningAuth, cookie: string, clock?: TestClock): Promise<string> {
    const reply = await auth.client.get('/auth', { cookie });
    expect(reply.status).toBe(200);
    const token = bearerOf(reply);
    expect(expiryOf(token)).toBeGreaterThan(Date.now());
    if (clock !== undefined) {
      const at = clock.now();
      const since = firstServed.get(token) ?? at;
      firstServed.set(token, since);
      expect(at).toBeLessThan(since + lifespanOf(token));
    }
    return token;
  }

  it(
    'should keep answering 200 with a fresh, unexpired 30 s token over two minutes of use on two replicas, renewing once at a time',
    async () => {
      // The replicas' clock, which the test moves past a token's life instead of waiting it out.
      const clock = runningClock();
      const [a, b] = [await start(shortLivedEnvironment, clock.now), await start(shortLivedEnvironment, clock.now)];
      const session = await login(a);
      const first = await liveToken(a, session.cookie);
      expect(expiryOf(first) - Date.now()).toBeLessThanOrEqual(30_000);
      // The refresh token stays on the server: in the cache service's record, never in an answer.
      const record = (await a.cache.get(`token:${session.tokenId}`)) as { refreshToken?: string };
      expect(record.refreshToken).toEqual(expect.any(String));
      const tokens = new Set<string>([first]);

      // Steady use, alternating replicas, several requests at once: every answer a live token.
      // A round every 1.5 s of the replicas' clock, which the test moves instead of waiting.
      const use = async (seconds: number): Promise<void> => {
        for (const until = clock.now() + seconds * 1000; clock.now() < until; clock.advance(1500), await sleep(ROUND_PAUSE_MS)) {
          for (const token of await Promise.all([a, b, a, b].map((auth) => liveToken(auth, session.cookie, clock)))) tokens.add(token);
        }
      };
      const began = clock.now();
      await use(45);
      // Past a whole lifespan without use: the token has expired, and 20 requests at once on both
      // replicas all wait for the same single renewal. A background renewal the last use may have
      // started ends within Oidc__TimeoutMs (5 s): it is let finish, then the replicas' clock moves
      // 33 s on (Keycloak's tokens keep their real times, so a served token is still checked live).
      const renewals = async (): Promise<number> => (await counterValue(a.registry, 'session_renewals_total')) + (await counterValue(b.registry, 'session_renewals_total'));
      expect(await renewals()).toBeGreaterThanOrEqual(2);
      await sleep(5_000);
      clock.advance(33_000);
      const before = await renewals();
      const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => liveToken(i % 2 === 0 ? a : b, session.cookie, clock)));
      expect(new Set(burst).size).toBe(1);
      expect((await renewals()) - before).toBe(1);
      expect(tokens.has(burst[0]!)).toBe(false);
      tokens.add(burst[0]!);
      await use(45);
      expect(clock.now() - began).toBeGreaterThanOrEqual(120_000);
      // The last use may have started a background renewal: let it finish (it takes at most
      // Oidc__TimeoutMs), count the grants, and only then ask for the token it produced. A renewal
      // this last request may start in turn is not counted, and its token is not asked for.
      await sleep(5_000);
      const renewed = (await counterValue(a.registry, 'session_renewals_total', { result: 'renewed' })) + (await counterValue(b.registry, 'session_renewals_total', { result: 'renewed' }));
      const last = await liveToken(b, session.cookie, clock);
      tokens.add(last);

      // 30 s tokens over two minutes: renewed many times, each one later than the one before.
      expect(tokens.size).toBeGreaterThanOrEqual(6);
      // Every refresh grant of both replicas gave a token that was served: none was made twice. The
      // tokens include the login's own, which leaves room for the one renewal the pause above may
      // have finished without its token ever being asked for.
      expect(renewed).toBeLessThanOrEqual(tokens.size);
      const expiries = [...tokens].map(expiryOf);
      expect(expiries).toEqual([...expiries].sort((x, y) => x - y));
      expect((await userinfo(last)).status).toBe(200);
    },
    240_000,
  );

  it("should hand GET /auth the user's Keycloak groups as of the access token's last renewal, not only the login's", async () => {
    const { auth, clock } = await startOnClock(shortLivedEnvironment);
    const session = await login(auth);
    const identity = async (): Promise<{ groups: string[]; role: string[] }> => {
      const reply = await auth.client.get('/auth', { cookie: session.cookie });
      expect(reply.status).toBe(200);
      const list = (name: string): string[] => (reply.headers.get(name) ?? '').split(',').filter(Boolean).sort();
      return { groups: list('x-auth-request-groups'), role: list('x-auth-request-role') };
    };
    expect(await identity()).toEqual({ groups: ['subscribers'], role: ['subscriber'] });
    const admin = keycloakAdmin();
    const [user] = await admin.usersNamed(phoneNumbers.at(-1)!);
    await admin.addToGroup(user!.id, 'clients');
    // Until the access token is renewed, the session's groups are those it was issued with.
    expect(await identity()).toEqual({ groups: ['subscribers'], role: ['subscriber'] });
    // Past the 30 s token's life on the replica's clock: this request waits for the renewal.
    clock.advance(31_000);
    expect(await identity()).toEqual({ groups: ['clients', 'subscribers'], role: ['client', 'subscriber'] });
    expect(await counterValue(auth.registry, 'session_renewals_total', { result: 'renewed' })).toBeGreaterThanOrEqual(1);
  }, 60_000);

  it('should end a session after the idle limit without use, and not while it is used', async () => {
    const { auth, clock } = await startOnClock({ Auth__SessionIdleSeconds: '4', Auth__SessionMaxSeconds: '600' });
    const session = await login(auth);
    // Used every 1.5 s for twice the idle limit: alive. The real pause lets each use's background
    // write-back land before the clock moves on.
    for (const until = clock.now() + 8000; clock.now() < until; clock.advance(1500), await sleep(3 * ROUND_PAUSE_MS)) await liveToken(auth, session.cookie);
    await liveToken(auth, session.cookie);
    await sleep(3 * ROUND_PAUSE_MS);
    // Past the idle limit without a use: over, in the replica and in the cache service.
    clock.advance(6500);
    expect((await auth.client.get('/auth', { cookie: session.cookie })).status).toBe(401);
    expect(await auth.cache.get(`token:${session.tokenId}`)).toBeUndefined();
  }, 30_000);

  it('should end a session at the absolute limit however active, with the cookie living as long', async () => {
    const { auth, clock } = await startOnClock({ Auth__SessionIdleSeconds: '4', Auth__SessionMaxSeconds: '6' });
    const session = await login(auth);
    // The session's clock started just before the answer: the limit falls at most 6 s from here.
    const loggedInAt = clock.now();
    expect(session.setCookie).toMatch(/; Max-Age=6;/);
    const statuses: Array<[number, number]> = [];
    for (let elapsed = 0; elapsed < 9500; clock.advance(1000), await sleep(3 * ROUND_PAUSE_MS), elapsed = clock.now() - loggedInAt) {
      statuses.push([elapsed, (await auth.client.get('/auth', { cookie: session.cookie })).status]);
    }
    expect(statuses.filter(([elapsed]) => elapsed < 5000).every(([, status]) => status === 200)).toBe(true);
    expect(statuses.filter(([elapsed]) => elapsed > 7500).map(([, status]) => status)).toEqual(expect.arrayContaining([401]));
    expect(statuses.filter(([elapsed]) => elapsed > 7500).every(([, status]) => status === 401)).toBe(true);
  }, 30_000);

  it('should revoke the refresh token at Keycloak on logout', async () => {
    const auth = await start(shortLivedEnvironment);
    const session = await login(auth);
    const { refreshToken } = (await auth.cache.get(`token:${session.tokenId}`)) as { refreshToken: string };
    expect(await introspect(refreshToken, shortLived)).toBe(true);
    const out = await auth.client.post('/logout', undefined, { cookie: session.cookie });
    expect(out.status).toBe(204);
    expect(await introspect(refreshToken, shortLived)).toBe(false);
    expect((await auth.client.get('/auth', { cookie: session.cookie })).status).toBe(401);
  });

  it('should end the session (401) when Keycloak refuses its refresh token, serving no expired token meanwhile', async () => {
    // The replica's clock, which the test moves in 500 ms steps instead of waiting; the token is
    // issued before the first step, so its `exp` is a time on that clock too.
    const clock = runningClock();
    const auth = await start(shortLivedEnvironment, clock.now);
    const session = await login(auth);
    const { refreshToken, expiresAtMs, renewAtMs } = (await auth.cache.get(`token:${session.tokenId}`)) as { refreshToken: string; expiresAtMs: number; renewAtMs: number };
    await revokeAtKeycloak(refreshToken, shortLived);
    // Renewal is due half-way through the 30 s token; until Keycloak has refused it, the live
    // token is served. From then on each step leaves the refusal real time to arrive.
    let reply: Reply;
    const deadline = clock.now() + 40_000;
    do {
      reply = await auth.client.get('/auth', { cookie: session.cookie });
      if (reply.status === 200) expect(expiryOf(bearerOf(reply))).toBeGreaterThan(clock.now());
      clock.advance(500);
      await sleep(clock.now() < renewAtMs ? 0 : 4 * ROUND_PAUSE_MS);
    } while (reply.status === 200 && clock.now() < deadline);
    expect(reply.status).toBe(401);
    // Ended by the refusal, not by the token's expiry.
    expect(clock.now()).toBeLessThan(expiresAtMs);
    expect(await auth.cache.get(`token:${session.tokenId}`)).toBeUndefined();
  }, 60_000);

  it('should serve the live token while Keycloak is unreachable, never once expired (503), and renew when it is back', async () => {
    const keycloak = await startTcpProxy(new URL(keycloakUrl()));
    try {
      // The replica's clock, which the test moves in 500 ms steps instead of waiting; the first
      // token is issued before the first step, so its `exp` is a time on that clock too.
      const clock = runningClock();
      const auth = await start({ ...shortLivedEnvironment, Oidc__ServerUrl: keycloak.url, Oidc__TimeoutMs: '2000' }, clock.now);
      const session = await login(auth);
      const first = await liveToken(auth, session.cookie);
      await keycloak.cut();
      const seen: Array<{ at: number; status: number; token?: string }> = [];
      while (clock.now() < expiryOf(first) + 3000) {
        const reply = await auth.client.get('/auth', { cookie: session.cookie });
        seen.push({ at: clock.now(), status: reply.status, ...(reply.status === 200 ? { token: bearerOf(reply) } : {}) });
        clock.advance(500);
        await sleep(ROUND_PAUSE_MS);
      }
      // Renewal was due from half-way and failed: the same token, live, until it expires; then 503.
      const served = seen.filter((answer) => answer.status === 200);
      expect(served.length).toBeGreaterThan(10);
      for (const answer of served) {
        expect(answer.token).toBe(first);
        expect(answer.at).toBeLessThan(expiryOf(first));
      }
      expect(seen.filter((answer) => answer.at > expiryOf(first)).map((answer) => answer.status)).toEqual(expect.arrayContaining([503]));
      expect(seen.every((answer) => answer.status === 200 || answer.status === 503)).toBe(true);
      await keycloak.restore();
      const renewed = await liveToken(auth, session.cookie);
      expect(renewed).not.toBe(first);
    } finally {
      await keycloak.close();
    }
  }, 60_000);
});
