import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import type { Reply } from './support/https-client.js';
import { expectAdmitted, expectRefused } from './support/otp-answers.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

/** A 429 with the limit's reason and a Retry-After of at most `maxRetryAfter` seconds. */
function expectLimited(reply: Reply, maxRetryAfter: number, reason: 'resend_cooldown' | 'phone_limit' | 'ip_limit'): void {
  expectRefused(reply, 429, reason, maxRetryAfter);
}

describe.each([
  ['memory', false],
  ['Redis', true],
])('POST /otp resend limits, kept in the cache service (%s backend)', (_backend, onRedis) => {
  let cacheService: RunningCacheService;
  /** A Redis of this suite's own, so the per-IP counters start from zero on every run. */
  let redis: PrivateRedis | undefined;
  /** Two replicas with the default limits (30 s cooldown) on one cache service. */
  let replicaA: RunningAuth;
  let replicaB: RunningAuth;
  /** No cooldown, 2 codes per phone and 3 per IP per hour. */
  let strict: RunningAuth;

  beforeAll(async () => {
    if (onRedis) redis = await startPrivateRedis();
    cacheService = await startCacheService(redis ? { redisUrl: redis.url, keyPrefix: 'auth-limits:' } : {});
    [replicaA, replicaB, strict] = await startAll<[RunningAuth, RunningAuth, RunningAuth]>([
      [startAuth(cacheService.address), (started) => started.close()],
      [startAuth(cacheService.address), (started) => started.close()],
      [startAuth(cacheService.address, { Otp__ResendCooldownSeconds: '0', Otp__MaxPerPhone: '2', Otp__MaxPerIp: '3' }), (started) => started.close()],
    ]);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await Promise.all([replicaA.close(), replicaB.close(), strict.close()]);
    await cacheService.close();
    await redis?.stop();
  });

  const request = (target: RunningAuth, phoneNumber: string, ip: string): Promise<Reply> => target.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': ip });

  it('should answer 429 with Retry-After to a resend within the cooldown, on any replica', async () => {
    const phoneNumber = newPhoneNumber();
    expect((await request(replicaA, phoneNumber, '192.0.2.10')).status).toBe(200);
    expectLimited(await request(replicaA, phoneNumber, '192.0.2.10'), 30, 'resend_cooldown');
    // Another replica and another IP: the cooldown belongs to the number and lives in the cache service.
    expectLimited(await request(replicaB, phoneNumber, '192.0.2.11'), 30, 'resend_cooldown');
    expect(await replicaA.cache.get(`otp:${phoneNumber}:cooldown`)).toEqual({ id: expect.any(String), untilMs: expect.any(Number) });
    expect(await counterValue(replicaB.registry, 'rate_limited_total', { scope: 'phone_cooldown' })).toBe(1);
    // Other numbers are not affected.
    expect((await request(replicaB, newPhoneNumber(), '192.0.2.10')).status).toBe(200);
  });

  it('should limit the codes per phone number within the window', async () => {
    const phoneNumber = newPhoneNumber();
    expect((await request(strict, phoneNumber, '192.0.2.20')).status).toBe(200);
    expect((await request(strict, phoneNumber, '192.0.2.21')).status).toBe(200);
    expectLimited(await request(strict, phoneNumber, '192.0.2.22'), 3600, 'phone_limit');
    expect(await counterValue(strict.registry, 'rate_limited_total', { scope: 'phone' })).toBe(1);
  });

  it('should limit the codes per client IP, taking the address the trusted proxy appended', async () => {
    // The client's own X-Forwarded-For entries (left) are ignored: the proxy's (right) counts.
    for (const spoofed of ['203.0.113.1', '203.0.113.2', '203.0.113.3']) {
      expect((await request(strict, newPhoneNumber(), `${spoofed}, 198.51.100.77`)).status).toBe(200);
    }
    expectLimited(await request(strict, newPhoneNumber(), '203.0.113.4, 198.51.100.77'), 3600, 'ip_limit');
    expect((await request(strict, newPhoneNumber(), '198.51.100.78')).status).toBe(200);
    expect(await counterValue(strict.registry, 'rate_limited_total', { scope: 'ip' })).toBe(1);
  });

  it('should count IPv6 clients per /64', async () => {
    for (const host of ['1', 'a:b:c:d', 'ffff:0:0:1']) {
      expect((await request(strict, newPhoneNumber(), `2001:db8:5:6:${host.includes(':') ? host : `0:0:0:${host}`}`)).status).toBe(200);
    }
    expectLimited(await request(strict, newPhoneNumber(), '2001:db8:5:6::99'), 3600, 'ip_limit');
    expect((await request(strict, newPhoneNumber(), '2001:db8:5:7::1')).status).toBe(200);
  });

  it('should send exactly one code for 50 concurrent requests for one number, over two replicas', async () => {
    const phoneNumber = newPhoneNumber();
    const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => request(i % 2 === 0 ? replicaA : replicaB, phoneNumber, `192.0.2.${100 + (i % 50)}`)));
    expectAdmitted(replies, 1);
    for (const reply of replies.filter((r) => r.status !== 200)) expectLimited(reply, 30, 'resend_cooldown');
  });

  it('should admit exactly the per-IP limit of 60 concurrent requests for distinct numbers from one IP, over two replicas', async () => {
    const replies = await Promise.all(Array.from({ length: 60 }, (_, i) => request(i % 2 === 0 ? replicaA : replicaB, newPhoneNumber(), '198.51.100.200')));
    expectAdmitted(replies, 20);
    for (const reply of replies.filter((r) => r.status !== 200)) expectLimited(reply, 3600, 'ip_limit');
  });

  it('should hand the number its budget back when its request was refused for the IP', async () => {
    const ip = '198.51.100.210';
    for (let i = 0; i < 3; i++) expect((await request(strict, newPhoneNumber(), ip)).status).toBe(200);
    const victim = newPhoneNumber();
    // From the exhausted IP, however often: refused for the IP, and nothing of the number's is spent.
    for (let i = 0; i < 4; i++) expectLimited(await request(strict, victim, ip), 3600, 'ip_limit');
    expect((await request(strict, victim, '198.51.100.211')).status).toBe(200);
    expect((await request(strict, victim, '198.51.100.212')).status).toBe(200);
    expectLimited(await request(strict, victim, '198.51.100.213'), 3600, 'phone_limit');
  });

  it('should hold a number to its hourly limit through bursts of concurrent requests', async () => {
    const phoneNumber = newPhoneNumber();
    const bursts = await Promise.all(Array.from({ length: 6 }, (_, burst) => Promise.all(Array.from({ length: 10 }, (_, i) => request(strict, phoneNumber, `192.0.2.${burst * 10 + i + 1}`)))));
    expectAdmitted(bursts.flat(), 2);
  });
});
