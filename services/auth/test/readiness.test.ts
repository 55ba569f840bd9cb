import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { freePort } from '../../../test/support/redis-server.js';
import { startAuth, type RunningAuth } from './support/auth-fixture.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';

interface Readiness {
  status: string;
  failing: string[];
  checks: Record<string, string>;
}

async function readiness(auth: RunningAuth): Promise<{ status: number; body: Readiness }> {
  const response = await fetch(`${auth.managementUrl}/readyz`);
  return { status: response.status, body: (await response.json()) as Readiness };
}

describe('readiness and metrics on the management port', () => {
  let cacheService: RunningCacheService;
  let healthy: RunningAuth;
  let withoutCache: RunningAuth;

  beforeAll(async () => {
    cacheService = await startCacheService();
    [healthy, withoutCache] = await startAll<[RunningAuth, RunningAuth]>([
      [startAuth(cacheService.address), (started) => started.close()],
      // Nothing listens there: the cache service is "down".
      [startAuth(`127.0.0.1:${await freePort()}`, { Cache__DeadlineMs: '500' }), (started) => started.close()],
    ]);
  });

  afterAll(async () => {
    await Promise.all([healthy.close(), withoutCache.close()]);
    await cacheService.close();
  });

  it('should be ready when the cache service, Kafka and Keycloak answer', async () => {
    const { status, body } = await readiness(healthy);
    expect(status).toBe(200);
    expect(body).toEqual({ status: 'ok', failing: [], checks: { cache: 'ok', kafka: 'ok', keycloak: 'ok' } });
  });

  it('should answer 503 naming the cache service when it cannot be reached, and 503 to requests that need it', async () => {
    const { status, body } = await readiness(withoutCache);
    expect(status).toBe(503);
    expect(body.failing).toEqual(['cache']);
    expect(body.checks.cache).toBe('cache service is unavailable');
    const reply = await withoutCache.client.post('/otp', { phoneNumber: newPhoneNumber() });
    expect(reply.status).toBe(503);
    expect(reply.json()).toEqual({ error: 'cache service is unavailable' });
    expect((await withoutCache.client.get('/auth', { cookie: `TokenId=${'a'.repeat(43)}` })).status).toBe(503);
  });

  it('should expose the service counters', async () => {
    await healthy.client.post('/otp/verify', { phoneNumber: newPhoneNumber(), code: '123456' }, { 'x-role-claim': 'client' });
    const text = await (await fetch(`${healthy.managementUrl}/metrics`)).text();
    expect(text).toMatch(/^otp_verifications_total\{result="expired",service="auth"\} 1$/m);
    for (const name of ['otp_issued_total', 'logins_total', 'rate_limited_total', 'http_requests_total']) expect(text).toContain(`# TYPE ${name} counter`);
  });
});
