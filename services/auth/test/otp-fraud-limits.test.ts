import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { SMS_BUDGET_KEY } from '../src/otp/rate-limiter.js';
import { capturingLogger, counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import type { Reply } from './support/https-client.js';
import { cacheCounter, expectAdmitted, expectNothingSpentFor, expectRefused } from './support/otp-answers.js';
import { numbersInDistinctPrefixes, numbersSharingPrefix } from './support/phones.js';
import { startSmsTopic, type SmsTopic } from './support/sms-topic.js';
import { startAll } from '../../../test/support/start-all.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const MAX_PER_PREFIX = 7;
const MAX_PER_MINUTE = 12;

/** The sum of a counter over replicas. */
const counted = async (replicas: RunningAuth[], name: string, labels: Record<string, string>): Promise<number> =>
  (await Promise.all(replicas.map((replica) => counterValue(replica.registry, name, labels)))).reduce((sum, value) => sum + value, 0);

describe.each([
  ['memory', false],
  ['Redis', true],
])('POST /otp prefix velocity and SMS budget over two replicas (%s backend of the cache service)', (_backend, onRedis) => {
  let redis: PrivateRedis | undefined;
  let prefixCache: RunningCacheService;
  let budgetCache: RunningCacheService;
  let sms: SmsTopic;
  /** Two replicas on one cache service, Otp__MaxPerPrefix=7 (other limits as deployed). */
  let prefixReplicas: RunningAuth[];
  /** Two replicas on another cache service (its own budget), Otp__MaxPerMinute=12. */
  let budgetReplicas: RunningAuth[];
  const budgetLogs: string[] = [];

  beforeAll(async () => {
    if (onRedis) redis = await startPrivateRedis();
    const cacheOptions = (keyPrefix: string): Parameters<typeof startCacheService>[0] => (redis ? { redisUrl: redis.url, keyPrefix } : {});
    [prefixCache, budgetCache, sms] = await startAll<[RunningCacheService, RunningCacheService, SmsTopic]>([
      [startCacheService(cacheOptions('otp-prefix:')), (started) => started.close()],
      [startCacheService(cacheOptions('otp-budget:')), (started) => started.close()],
      [startSmsTopic(), (started) => started.close()],
    ]);
    const topic = { MessageBroker__NotificationsTopic: sms.topic };
    const prefixLimit = { ...topic, Otp__MaxPerPrefix: String(MAX_PER_PREFIX) };
    const budget = { ...topic, Otp__MaxPerMinute: String(MAX_PER_MINUTE) };
    const replicas = await startAll<RunningAuth[]>([
      [startAuth(prefixCache.address, prefixLimit), (started) => started.close()],
      [startAuth(prefixCache.address, prefixLimit), (started) => started.close()],
      [startAuth(budgetCache.address, budget, capturingLogger(budgetLogs)), (started) => started.close()],
      [startAuth(budgetCache.address, budget, capturingLogger(budgetLogs)), (started) => started.close()],
    ]);
    prefixReplicas = replicas.slice(0, 2);
    budgetReplicas = replicas.slice(2);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await Promise.all([...(prefixReplicas ?? []), ...(budgetReplicas ?? [])].map((replica) => replica.close()));
    await Promise.all([prefixCache?.close(), budgetCache?.close(), sms?.close()]);
    await redis?.stop();
  });

  /**
   * Requests a code for every number at once, alternating between the replicas, each from an
   * address of its own (198.{network}.{i}.1); checks that exactly `expected` were admitted, every
   * other answer with `refused`, and that SMS events went exactly to the admitted numbers.
   */
  async function expectExactlyAdmitted(replicas: RunningAuth[], numbers: readonly string[], network: number, expected: number, refused: (reply: Reply) => void): Promise<string[]> {
    const replies = await Promise.all(numbers.map((phoneNumber, i) => replicas[i % 2]!.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': `198.${network}.${i}.1` })));
    const admitted = numbers.filter((_, i) => replies[i]!.status === 200);
    expectAdmitted(replies, expected);
    for (const reply of replies.filter((r) => r.status !== 200)) refused(reply);
    expect((await sms.recipients()).filter((to) => numbers.includes(to)).sort()).toEqual([...admitted].sort());
    return admitted;
  }

  it('should send exactly Otp__MaxPerPrefix codes and SMS events to 40 numbers of one prefix requested concurrently from 40 addresses', async () => {
    const { prefix, numbers } = numbersSharingPrefix(40);
    const admitted = await expectExactlyAdmitted(prefixReplicas, numbers, 18, MAX_PER_PREFIX, (reply) => expectRefused(reply, 429, 'prefix_limit', 3600));

    // The refused spent nothing: not their numbers' budgets, not their addresses', not the platform's.
    const [replica] = prefixReplicas as [RunningAuth];
    for (const phoneNumber of numbers.filter((n) => !admitted.includes(n))) await expectNothingSpentFor(replica, phoneNumber);
    const addressCounts = await Promise.all(numbers.map((_, i) => cacheCounter(replica, `ratelimit:otp:ip:198.18.${i}.1`)));
    expect(addressCounts.reduce((sum, count) => sum + count, 0)).toBe(MAX_PER_PREFIX);
    expect(await cacheCounter(replica, SMS_BUDGET_KEY)).toBe(MAX_PER_PREFIX);
    expect(await counted(prefixReplicas, 'auth_otp_refused_total', { reason: 'prefix_limit' })).toBe(40 - MAX_PER_PREFIX);
    expect(await counted(prefixReplicas, 'rate_limited_total', { scope: 'prefix' })).toBe(40 - MAX_PER_PREFIX);

    // Numbers of another prefix still get codes.
    const [other] = numbersInDistinctPrefixes(2).filter((n) => !n.startsWith(prefix));
    expect((await prefixReplicas[1]!.client.post('/otp', { phoneNumber: other }, { 'x-forwarded-for': '198.18.200.1' })).status).toBe(200);
  });

  it('should send exactly Otp__MaxPerMinute codes over two replicas and answer the others 503 with Retry-After, spending nothing of theirs', async () => {
    const numbers = numbersInDistinctPrefixes(40);
    const admitted = await expectExactlyAdmitted(budgetReplicas, numbers, 19, MAX_PER_MINUTE, (reply) => expectRefused(reply, 503, 'sms_budget_exhausted', 60));

    const [replica] = budgetReplicas as [RunningAuth];
    for (const phoneNumber of numbers.filter((n) => !admitted.includes(n))) {
      await expectNothingSpentFor(replica, phoneNumber);
      expect(await cacheCounter(replica, `ratelimit:otp:prefix:${phoneNumber.slice(0, 9)}`)).toBe(0);
    }
    expect(await counted(budgetReplicas, 'auth_otp_refused_total', { reason: 'sms_budget_exhausted' })).toBe(40 - MAX_PER_MINUTE);
    expect(await counted(budgetReplicas, 'rate_limited_total', { scope: 'budget' })).toBe(40 - MAX_PER_MINUTE);
    expect(await counted(budgetReplicas, 'auth_otp_sent_total', { country: 'DE' })).toBe(MAX_PER_MINUTE);
    // One warning for the window, whichever replica met the first refusal; no error lines for the 503s.
    expect(budgetLogs.filter((line) => line.includes('SMS budget exhausted'))).toHaveLength(1);
    expect(budgetLogs.filter((line) => ['error', 'fatal'].includes((JSON.parse(line) as { level: string }).level))).toEqual([]);
  });
});
