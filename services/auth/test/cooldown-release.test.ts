import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, type CacheClient } from '@sp/cache-client';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { createOtpRateLimiter } from '../src/rate-limiter.js';
import { withSlowReads } from './support/slow-reads.js';
import { newPhoneNumber } from './support/phones.js';

describe('OTP cooldown given back after the next code claimed the number', () => {
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
