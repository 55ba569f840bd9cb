import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { unavailable } from '@sp/core';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { tryCacheLock, withCacheLock } from '../src/cache-lock.js';
import { createOtpRateLimiter } from '../src/otp/rate-limiter.js';
import { newPhoneNumber } from './support/phones.js';
import { withSlowReads } from './support/slow-reads.js';

/** Records released after use (locks, an OTP cooldown), on the real cache service. */
describe('releases of records that may have changed hands', () => {
  let cacheService: RunningCacheService;
  let cache: CacheClient<unknown>;

  beforeAll(async () => {
    cacheService = await startCacheService();
    cache = createCacheClient<unknown>({ address: cacheService.address });
  });

  afterAll(async () => {
    cache.close();
    await cacheService.close();
  });

  it('should not release the lock of the next holder when it changed hands while the release was on its way', async () => {
    // Holder 1's lock lives 300 ms; its release starts at 100 ms over a network whose reads
    // come back 400 ms late; holder 2 takes the lock once it expired, at 350 ms. A release that
    // read the lock (holder 1's, at 100 ms) and then removed it (at 500 ms) removed holder 2's.
    const release1 = await tryCacheLock(withSlowReads(cache, 400), 'lock:race', 300);
    expect(release1).toBeDefined();
    await sleep(100);
    const releasing = release1!();
    await sleep(250);
    const release2 = await tryCacheLock(cache, 'lock:race', 60_000);
    expect(release2).toBeDefined();
    await releasing;
    await sleep(200);
    expect(await tryCacheLock(cache, 'lock:race', 60_000)).toBeUndefined();
    await release2!();
    expect(await tryCacheLock(cache, 'lock:race', 60_000)).toBeDefined();
  });

  it('should run the work of concurrent callers one at a time and free the lock after each', async () => {
    let inside = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      most = Math.max(most, ++inside);
      await sleep(20);
      inside--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withCacheLock(cache, 'lock:serial', { ttlMs: 10_000, waitMs: 5000, pollMs: 10 }, work)));
    expect(most).toBe(1);
    expect(await cache.get('lock:serial')).toBeUndefined();
  });

  it('should give back a cooldown whose claim was stored but whose answer was lost', async () => {
    // The claim reaches the cache service and is stored; its answer does not come back (a
    // deadline passed on a busy machine). The request answers 503, and the number must not then be
    // held for the whole cooldown with no code sent: the next request is admitted at once.
    const limits = { cooldownSeconds: 30, maxPerPhone: 100, maxPerIp: 100, maxPerPrefix: 100, maxPerMinute: 1000, windowSeconds: 60 };
    const lostClaims: CacheClient<unknown> = {
      ...cache,
      nearCache: cache.nearCache,
      async setIfAbsent(key, value, ttlMs) {
        await cache.setIfAbsent(key, value, ttlMs);
        throw unavailable('cache service', new Error('deadline exceeded'));
      },
    };
    const requester = { phone: newPhoneNumber(), ip: '203.0.113.8', prefix: '+4915' };
    const limiter = createOtpRateLimiter(lostClaims, limits, { now: Date.now, logger: silentLogger() });
    await expect(limiter.admit(requester)).rejects.toMatchObject({ status: 503 });
    expect(await cache.get(`otp:${requester.phone}:cooldown`)).toBeUndefined();
    const next = createOtpRateLimiter(cache, limits, { now: Date.now, logger: silentLogger() });
    await expect(next.admit(requester)).resolves.toMatchObject({ phone: requester.phone });
  });

  it("should lift only its own cooldown: the next code's cooldown stays", async () => {
    // Code A's cooldown lives 300 ms. Its SMS fails and its admission is given back from 100 ms,
    // over a network whose reads come back 400 ms late; code B is admitted once A's cooldown is
    // gone, at 350 ms. A give-back that read A's cooldown (at 100 ms) and then removed the key (at
    // 500 ms) removed B's: a third code was then sent at once, with no cooldown.
    const limits = { cooldownSeconds: 0.3, maxPerPhone: 100, maxPerIp: 100, maxPerPrefix: 100, maxPerMinute: 1000, windowSeconds: 60 };
    const limiter = createOtpRateLimiter(withSlowReads(cache, 400), limits, { now: Date.now, logger: silentLogger() });
    const requester = { phone: newPhoneNumber(), ip: '203.0.113.7', prefix: '+4915' };
    const codeA = await limiter.admit(requester);
    await sleep(100);
    const givingBack = limiter.release(codeA);
    await sleep(250);
    await limiter.admit(requester);
    await givingBack;
    await sleep(200);
    await expect(limiter.admit(requester)).rejects.toMatchObject({ status: 429, code: 'resend_cooldown' });
  });
});
