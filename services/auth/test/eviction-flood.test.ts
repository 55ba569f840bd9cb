import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { localCacheSizing } from '../../../scripts/local-platform.js';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { loadConfig as loadCacheConfig } from '../../cache/src/config.js';
import { ALLOWED_ORIGIN, startAuth, type RunningAuth } from './support/auth-fixture.js';
import { cookieValue, type Reply } from './support/https-client.js';
import { keycloakAdmin } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const FLOOD = 5000;
const WORKERS = 50;

/** A client address from the IPv6 documentation prefix: a different /64 for nearly every request. */
const randomClient = (): string => `2001:db8:${randomInt(0, 0xffff).toString(16)}:${randomInt(0, 0xffff).toString(16)}::1`;

/**
 * Unauthenticated traffic against a bounded cache: the cache service runs with the platform's
 * partitions (make up, the chart) but only the specification's default capacity of 1,000 entries
 * for everything else, so 5,000 login states would push everything out of one shared LRU.
 */
describe('a flood of GET /login against the cache service sized as the platform runs it', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  const admin = keycloakAdmin();
  const createdUsers: string[] = [];

  beforeAll(async () => {
    const { backend } = loadCacheConfig({ Cache__Capacity: '1000', Cache__Partitions: localCacheSizing.partitions });
    if (backend.kind !== 'memory') throw new Error('memory backend expected');
    cacheService = await startCacheService({ capacity: backend.capacity, partitions: backend.partitions });
    // Development: POST /otp answers with the code. A session the cache service evicted is dropped
    // from the near cache too (its invalidation), so /auth tells whether the cache kept it.
    auth = await startAuth(cacheService.address, { NODE_ENV: 'Development', Otp__MaxPerPhone: '1', Otp__MaxPerIp: '2' });
  });

  afterAll(async () => {
    await Promise.all(createdUsers.map((id) => admin.deleteUser(id)));
    await auth.close();
    await cacheService.close();
  });

  const requestOtp = (phoneNumber: string, ip: string): Promise<Reply> => auth.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': ip });

  it('should keep an earlier session and every limit that held before', async () => {
    // A session, a number at its hourly limit, an IP at its limit.
    const phoneNumber = newPhoneNumber();
    const issued = await requestOtp(phoneNumber, '198.51.100.50');
    expect(issued.status).toBe(200);
    const login = await auth.client.post('/otp/verify', { phoneNumber, code: issued.json<{ code: string }>().code }, { 'x-role-claim': 'subscriber' });
    expect(login.status).toBe(200);
    createdUsers.push(...(await admin.usersNamed(phoneNumber)).map((user) => user.id));
    const session = { cookie: `TokenId=${cookieValue(login.cookies, 'TokenId')!}` };
    expect((await auth.client.get('/auth', session)).status).toBe(200);
    expect((await requestOtp(newPhoneNumber(), '198.51.100.51')).status).toBe(200);
    expect((await requestOtp(newPhoneNumber(), '198.51.100.51')).status).toBe(200);

    let next = 0;
    const statuses: number[] = [];
    const worker = async (): Promise<void> => {
      while (next < FLOOD) {
        next++;
        statuses.push((await auth.client.get(`/login?${new URLSearchParams({ redirectUri: `${ALLOWED_ORIGIN}/` }).toString()}`, { 'x-forwarded-for': randomClient() })).status);
      }
    };
    await Promise.all(Array.from({ length: WORKERS }, worker));
    // Every status counted, so a failure says which answers came instead of the redirect.
    const counts: Record<number, number> = {};
    for (const status of statuses) counts[status] = (counts[status] ?? 0) + 1;
    expect(counts).toEqual({ 302: FLOOD });

    expect((await auth.client.get('/auth', session)).status).toBe(200);
    expect((await requestOtp(phoneNumber, '198.51.100.52')).status).toBe(429);
    expect((await requestOtp(newPhoneNumber(), '198.51.100.51')).status).toBe(429);
    // 5,000 logins' worth of work: seconds on a quiet machine, more than jest's default 30 s on a
    // loaded one. What is checked is what survives the flood, not its speed (bench/auth.bench.ts).
  }, HANG_GUARD_MS);
});
