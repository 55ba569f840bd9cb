import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../test/support/kafka.js';
import { startAuth, type RunningAuth } from './support/auth-fixture.js';
import { cookieValue } from './support/https-client.js';
import { deleteUsersNamed } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';

/** One GET /auth: when it was sent (performance.now) and what it got. */
interface Probe {
  sentAt: number;
  status: number;
}

const TRIALS = 8;
const LOOPS = 4;

describe('logout against concurrent GET /auth on the same replica', () => {
  let cacheService: RunningCacheService;
  let events: EventCollector;
  let auth: RunningAuth;
  const phoneNumbers: string[] = [];

  beforeAll(async () => {
    [cacheService, events] = await startAll<[RunningCacheService, EventCollector]>([
      [startCacheService(), (started) => started.close()],
      [collectEvents(['notifications']), (started) => started.close()],
    ]);
    // The near cache as deployed: a read that overlapped the removal could refill it.
    auth = await startAuth(cacheService.address, { Otp__ResendCooldownSeconds: '0' });
  });

  afterAll(async () => {
    await auth.close();
    await events.close();
    await cacheService.close();
    await deleteUsersNamed(phoneNumbers);
  });

  async function login(trial: number): Promise<string> {
    const phoneNumber = newPhoneNumber();
    phoneNumbers.push(phoneNumber);
    const ip = { 'x-forwarded-for': `198.51.100.${trial + 1}` };
    expect((await auth.client.post('/otp', { phoneNumber }, ip)).status).toBe(200);
    const sms = await events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
    const verified = await auth.client.post('/otp/verify', { phoneNumber, code: String(sms.value.code) }, { ...ip, 'x-role-claim': 'subscriber' });
    expect(verified.status).toBe(200);
    return `TokenId=${cookieValue(verified.cookies, 'TokenId')!}`;
  }

  /** GET /auth in a tight loop until `stop()` says so. */
  async function probeUntil(cookie: string, stop: () => boolean, probes: Probe[]): Promise<void> {
    while (!stop()) {
      const sentAt = performance.now();
      const reply = await auth.client.get('/auth', { cookie });
      probes.push({ sentAt, status: reply.status });
    }
  }

  it(
    'should never answer 200 to a GET /auth sent after the logout answered 204, over many trials',
    async () => {
      const late: Probe[] = [];
      let before = 0;
      let after = 0;
      for (let trial = 0; trial < TRIALS; trial++) {
        const cookie = await login(trial);
        const probes: Probe[] = [];
        let loggedOutAt = Infinity;
        // Well past the removal's invalidation after the 204: a refilled entry would show there.
        const stop = (): boolean => performance.now() > loggedOutAt + 1200;
        const loops = Array.from({ length: LOOPS }, () => probeUntil(cookie, stop, probes));
        while (probes.length < 20) await new Promise((resolve) => setImmediate(resolve));
        const out = await auth.client.post('/logout', undefined, { cookie });
        expect(out.status).toBe(204);
        loggedOutAt = performance.now();
        await Promise.all(loops);
        late.push(...probes.filter((probe) => probe.sentAt > loggedOutAt && probe.status !== 401));
        before += probes.filter((probe) => probe.sentAt < loggedOutAt && probe.status === 200).length;
        after += probes.filter((probe) => probe.sentAt > loggedOutAt).length;
      }
      expect(late).toEqual([]);
      // The loops did run on both sides of each logout.
      expect(before).toBeGreaterThanOrEqual(TRIALS * 20);
      expect(after).toBeGreaterThan(TRIALS * LOOPS);
    },
    180_000,
  );
});
