import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually } from '../../../test/support/eventually.js';
import type { EventCollector } from '../../../test/support/kafka.js';
import type { AuthParts } from '../src/auth.js';
import { newSessionId, type TokenRecord } from '../src/sessions/token-store.js';
import { counterValue, createTestAuth, type RunningAuth } from './support/auth-fixture.js';
import { authClient, deleteUsersNamed, introspect } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { startReplicaPair, type ReplicaPair } from './support/replica-pair.js';

interface ListedSession {
  id: string;
  createdAt: string;
  lastSeenAt: string;
  ip: string | null;
  userAgent: string | null;
  current: boolean;
}

const MAX = 3;
const settings = { Auth__MaxSessionsPerUser: String(MAX), Otp__ResendCooldownSeconds: '0', Otp__MaxPerPhone: '50', Otp__MaxPerIp: '200' };

describe('a user\'s sessions, over two auth replicas on two cache replicas of one Redis', () => {
  let pair: ReplicaPair;
  let caches: RunningCacheService[];
  let events: EventCollector;
  let authA: RunningAuth;
  let authB: RunningAuth;
  const phoneNumbers: string[] = [];

  beforeAll(async () => {
    pair = await startReplicaPair('auth-sessions', settings);
    ({ caches, events, a: authA, b: authB } = pair);
  }, 60_000);

  afterAll(async () => {
    await pair.close();
    await deleteUsersNamed(new Set(phoneNumbers));
  });

  const user = (): string => {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    return phoneNumber;
  };
  // Each login of a number takes a fresh code; the SMS collector hands out the first one it saw, so wait for the newest.
  let loginNo = 0;
  async function login(auth: RunningAuth, phoneNumber: string, userAgent: string): Promise<string> {
    loginNo++;
    const headers = { 'x-forwarded-for': `203.0.113.${loginNo}`, 'user-agent': userAgent };
    const before = events.events.length;
    expect((await auth.client.post('/otp', { phoneNumber }, headers)).status).toBe(200);
    const sms = await events.waitFor((event) => events.events.indexOf(event) >= before && event.topic === 'notifications' && event.key === phoneNumber);
    const verified = await auth.client.post('/otp/verify', { phoneNumber, code: String(sms.value.code) }, { ...headers, 'x-role-claim': 'subscriber' });
    expect(verified.status).toBe(200);
    return `TokenId=${verified.cookies[0]!.split(';')[0]!.split('=')[1]!}`;
  }
  const statusOf = async (auth: RunningAuth, cookie: string): Promise<number> => (await auth.client.get('/auth', { cookie })).status;
  const list = async (auth: RunningAuth, cookie: string): Promise<ListedSession[]> => {
    const reply = await auth.client.get('/sessions', { cookie });
    expect(reply.status).toBe(200);
    return reply.json<{ sessions: ListedSession[] }>().sessions;
  };
  const tokenIdOf = (cookie: string): string => cookie.slice('TokenId='.length);
  const del = (auth: RunningAuth, path: string, cookie: string) => auth.client.request('DELETE', path, { headers: { cookie } });

  it('should list only the caller\'s own sessions, end one, end the others, end all, and never touch another user\'s', async () => {
    const alice = user();
    const bob = user();
    const first = await login(authA, alice, 'agent/1');
    const second = await login(authB, alice, 'agent/2');
    const third = await login(authA, alice, 'agent/3');
    const bobs = await login(authB, bob, 'agent/bob');

    const seen = await list(authB, third);
    expect(seen.map((session) => [session.userAgent, session.current])).toEqual([
      ['agent/1', false],
      ['agent/2', false],
      ['agent/3', true],
    ]);
    expect(seen[0]!.ip).toMatch(/^203\.0\.113\.\d+$/);
    expect(Date.parse(seen[0]!.createdAt)).toBeLessThanOrEqual(Date.parse(seen[1]!.createdAt));
    // The public ids are not the token ids (the bearer credentials).
    const listedText = JSON.stringify(seen);
    for (const cookie of [first, second, third]) expect(listedText).not.toContain(tokenIdOf(cookie));
    const bobsList = await list(authA, bobs);
    expect(bobsList).toHaveLength(1);

    // Bob cannot end Alice's session, nor see it.
    expect((await del(authA, `/sessions/${seen[0]!.id}`, bobs)).status).toBe(404);
    expect(await statusOf(authB, first)).toBe(200);
    expect((await list(authA, bobs)).map((session) => session.id)).not.toContain(seen[0]!.id);

    // End one (the second), from the third; its refresh token is revoked at Keycloak too.
    const secondRecord = (await authA.cache.get(`token:${tokenIdOf(second)}`)) as TokenRecord;
    const ended = await del(authB, `/sessions/${seen[1]!.id}`, third);
    expect(ended.status).toBe(204);
    expect(ended.cookies).toEqual([]); // not the caller's own: its cookie stays
    expect([await statusOf(authA, second), await statusOf(authB, second)]).toEqual([401, 401]);
    expect(await introspect(secondRecord.refreshToken!, authClient())).toBe(false);
    expect((await list(authA, third)).map((session) => session.userAgent)).toEqual(['agent/1', 'agent/3']);

    // End the others.
    expect((await del(authA, '/sessions?scope=others', third)).status).toBe(204);
    expect([await statusOf(authA, first), await statusOf(authB, first), await statusOf(authB, third)]).toEqual([401, 401, 200]);

    // Refusals: no scope, another scope, no cookie.
    expect((await del(authA, '/sessions', third)).status).toBe(400);
    expect((await del(authA, '/sessions?scope=mine', third)).status).toBe(400);
    expect((await authA.client.get('/sessions')).status).toBe(401);

    // End all: the caller's own too, with its cookie cleared.
    const all = await del(authB, '/sessions?scope=all', third);
    expect(all.status).toBe(204);
    expect(all.cookies).toEqual([expect.stringMatching(/^TokenId=; Max-Age=0;/)]);
    expect([await statusOf(authA, third), await statusOf(authB, third)]).toEqual([401, 401]);
    expect((await authB.client.get('/sessions', { cookie: third })).status).toBe(401);
    // Bob's session was never touched.
    expect(await statusOf(authA, bobs)).toBe(200);
  }, 120_000);

  it(`should end the oldest session when a login passes Auth__MaxSessionsPerUser (${MAX})`, async () => {
    const carol = user();
    const cookies: string[] = [];
    for (let i = 0; i <= MAX; i++) cookies.push(await login(i % 2 === 0 ? authA : authB, carol, `agent/${i}`));
    expect(await Promise.all(cookies.map((cookie) => statusOf(authB, cookie)))).toEqual([401, 200, 200, 200]);
    // The login that passed the bound (the fourth, through B) ended the oldest.
    expect(await counterValue(authB.registry, 'auth_sessions_ended_total', { reason: 'over_bound' })).toBe(1);
    expect((await list(authA, cookies[MAX]!)).map((session) => session.userAgent)).toEqual(['agent/1', 'agent/2', 'agent/3']);
  }, 120_000);

  describe('20 concurrent logins of one user over two replicas', () => {
    const replicas: AuthParts[] = [];

    beforeAll(() => {
      // Two replicas as createAuth builds them, one on each cache replica: their login
      // completion's registration of a session is what runs concurrently.
      for (const cache of caches) replicas.push(createTestAuth(cache.address, settings).auth);
    });

    afterAll(async () => {
      for (const replica of replicas) await replica.close();
    });

    it(`should keep exactly ${MAX} live, listed sessions`, async () => {
      const dave = user();
      const template = (await authA.cache.get(`token:${tokenIdOf(await login(authA, dave, 'agent/template'))}`)) as TokenRecord;
      const logins = Array.from({ length: 20 }, async (_, i) => {
        const { services } = replicas[i % 2]!;
        const now = Date.now();
        const record: TokenRecord = { ...template, sessionId: newSessionId(), createdAtMs: now, lastSeenAtMs: now, userAgent: `agent/concurrent-${i}` };
        delete record.refreshToken; // the template's own, which only its session may revoke
        const tokenId = await services.tokens.save(record, 600_000);
        await services.userSessions.register(tokenId, record, 600_000);
        return `TokenId=${tokenId}`;
      });
      const cookies = await Promise.all(logins);
      const live = await eventually(async () => {
        const statuses = await Promise.all(cookies.map((cookie) => statusOf(authA, cookie)));
        const onB = await Promise.all(cookies.map((cookie) => statusOf(authB, cookie)));
        return JSON.stringify(statuses) === JSON.stringify(onB) && statuses.filter((status) => status === 200).length === MAX ? statuses : undefined;
      }, 5000, `exactly ${MAX} live sessions on both replicas`);
      const survivor = cookies[live.indexOf(200)]!;
      const listed = await list(authB, survivor);
      expect(listed).toHaveLength(MAX);
      // What is listed is exactly what is live.
      const liveAgents = cookies.filter((_, i) => live[i] === 200).map((cookie) => cookies.indexOf(cookie));
      expect(listed.map((session) => session.userAgent).sort()).toEqual(liveAgents.map((i) => `agent/concurrent-${i}`).sort());
    }, 120_000);
  });
});
