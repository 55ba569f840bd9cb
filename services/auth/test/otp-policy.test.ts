import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { SMS_BUDGET_KEY } from '../src/otp/rate-limiter.js';
import { capturingLogger, counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import type { Reply } from './support/https-client.js';
import { cacheCounter, expectNothingSpentFor, expectRefused } from './support/otp-answers.js';
import { mobileNumberIn, numbersInDistinctPrefixes } from './support/phones.js';
import { startSmsTopic, type SmsTopic } from './support/sms-topic.js';
import { startAll } from '../../../test/support/start-all.js';

/**
 * The policies of POST /otp (country, number type) against the real cache service and Kafka, and
 * every refusal's reason. A refused number must leave nothing: no SMS event, no code, no cooldown,
 * no count against its number, and nothing of the platform's SMS budget.
 */
describe('POST /otp policies', () => {
  let cacheService: RunningCacheService;
  let sms: SmsTopic;
  /** Allowed: DE, FR, US; FR monitored. */
  let listed: RunningAuth;
  /** Allowed: `*`; blocked: RU, NG. */
  let open: RunningAuth;
  /** The defaults (every country, mobile and fixed-line-or-mobile numbers, 30 s cooldown). */
  let defaults: RunningAuth;
  /** Fixed-line numbers too. */
  let fixedLine: RunningAuth;
  const listedLogs: string[] = [];

  beforeAll(async () => {
    [cacheService, sms] = await startAll<[RunningCacheService, SmsTopic]>([
      [startCacheService(), (started) => started.close()],
      [startSmsTopic(), (started) => started.close()],
    ]);
    const topic = { MessageBroker__NotificationsTopic: sms.topic };
    [listed, open, defaults, fixedLine] = await startAll<[RunningAuth, RunningAuth, RunningAuth, RunningAuth]>([
      [startAuth(cacheService.address, { ...topic, Otp__AllowedCountries: 'DE,FR,US', Otp__MonitoredCountries: 'fr' }, capturingLogger(listedLogs)), (started) => started.close()],
      [startAuth(cacheService.address, { ...topic, Otp__AllowedCountries: '*', Otp__BlockedCountries: 'RU,NG' }), (started) => started.close()],
      [startAuth(cacheService.address, topic), (started) => started.close()],
      [startAuth(cacheService.address, { ...topic, Otp__AllowedNumberTypes: 'MOBILE,FIXED_LINE_OR_MOBILE,FIXED_LINE' }), (started) => started.close()],
    ]);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([listed, open, defaults, fixedLine].map((auth) => auth?.close()));
    await Promise.all([cacheService?.close(), sms?.close()]);
  });

  const request = (auth: RunningAuth, phoneNumber: string): Promise<Reply> => auth.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': `203.0.${randomInt(0, 256)}.${randomInt(1, 255)}` });

  /** Requests a code and checks what was spent: on 200 one SMS event and one of the budget, on a refusal nothing at all. */
  async function requestAndAccount(auth: RunningAuth, phoneNumber: string): Promise<Reply> {
    const budgetBefore = await cacheCounter(auth, SMS_BUDGET_KEY);
    const reply = await request(auth, phoneNumber);
    const smsEvents = (await sms.recipients()).filter((to) => to === phoneNumber).length;
    const budgetSpent = (await cacheCounter(auth, SMS_BUDGET_KEY)) - budgetBefore;
    expect({ status: reply.status, smsEvents, budgetSpent }).toEqual(reply.status === 200 ? { status: 200, smsEvents: 1, budgetSpent: 1 } : { status: reply.status, smsEvents: 0, budgetSpent: 0 });
    if (reply.status !== 200) await expectNothingSpentFor(auth, phoneNumber);
    return reply;
  }

  describe('countries, from the number by libphonenumber-js metadata', () => {
    const policies = { listed: () => listed, open: () => open };
    it.each([
      ['listed', 'DE', 200, 'in Otp__AllowedCountries'],
      ['listed', 'US', 200, 'in Otp__AllowedCountries'],
      ['listed', 'FR', 200, 'in Otp__AllowedCountries and monitored'],
      ['listed', 'GB', 403, 'not in Otp__AllowedCountries'],
      ['listed', 'RU', 403, 'not in Otp__AllowedCountries'],
      ['listed', '001', 403, 'a satellite phone, of no country'],
      ['open', 'DE', 200, 'allowed by *'],
      ['open', 'GB', 200, 'allowed by *'],
      ['open', 'BR', 200, 'allowed by *'],
      ['open', 'RU', 403, 'in Otp__BlockedCountries'],
      ['open', 'NG', 403, 'in Otp__BlockedCountries'],
      ['open', '001', 403, 'of no country: * means every country, not satellite phones'],
    ] as const)('should answer a mobile number of %s: %s → %i (%s)', async (policy, country, status, _why) => {
      const reply = await requestAndAccount(policies[policy](), mobileNumberIn(country));
      if (status === 403) expectRefused(reply, 403, 'country_not_allowed');
      else expect(reply.status).toBe(200);
    });

    it('should count and log codes sent to a monitored country, by country and prefix, never the whole number', async () => {
      const before = { monitored: await counterValue(listed.registry, 'auth_otp_monitored_total', { country: 'FR' }), sent: await counterValue(listed.registry, 'auth_otp_sent_total', { country: 'FR' }) };
      const phoneNumber = mobileNumberIn('FR');
      expect((await requestAndAccount(listed, phoneNumber)).status).toBe(200);
      expect(await counterValue(listed.registry, 'auth_otp_monitored_total', { country: 'FR' })).toBe(before.monitored + 1);
      expect(await counterValue(listed.registry, 'auth_otp_sent_total', { country: 'FR' })).toBe(before.sent + 1);
      // DE is allowed, not monitored.
      expect((await requestAndAccount(listed, mobileNumberIn('DE'))).status).toBe(200);
      expect(await counterValue(listed.registry, 'auth_otp_monitored_total', { country: 'DE' })).toBe(0);
      const warnings = listedLogs.filter((line) => line.includes('monitored country')).map((line) => JSON.parse(line) as Record<string, unknown>);
      expect(warnings).toContainEqual(expect.objectContaining({ level: 'warn', country: 'FR', prefix: phoneNumber.slice(0, 9), numberType: 'MOBILE' }));
      expect(listedLogs.join('\n')).not.toContain(phoneNumber);
    });
  });

  describe('number types (issue #25: "Codes are sent to premium-rate, toll-free and shared-cost numbers")', () => {
    it.each([
      ['premium-rate', '+499001234567'],
      ['premium-rate', '+449098790000'],
      ['toll-free', '+498001234567'],
      ['shared-cost', '+4918012345678'],
      ['fixed-line', '+4930123456'],
    ])('should refuse a %s number (%s) with 422, no SMS event and no budget spent', async (_type, phoneNumber) => {
      expectRefused(await requestAndAccount(defaults, phoneNumber), 422, 'number_type_not_allowed');
    });

    it('should send codes to mobile and fixed-line-or-mobile numbers, and to fixed-line ones where Otp__AllowedNumberTypes names them', async () => {
      expect((await requestAndAccount(defaults, mobileNumberIn('DE'))).status).toBe(200);
      // US numbers are fixed-line-or-mobile: the metadata cannot tell.
      expect((await requestAndAccount(defaults, mobileNumberIn('US'))).status).toBe(200);
      expect((await requestAndAccount(fixedLine, `+4930${String(randomInt(1_000_000, 10_000_000))}`)).status).toBe(200);
      expectRefused(await requestAndAccount(fixedLine, '+499001234567'), 422, 'number_type_not_allowed');
    });
  });

  it('should answer every refusal with its stable reason, Retry-After where waiting helps, as openapi.yaml documents', async () => {
    // Its own cache service: a budget of 5 a minute that only this test spends.
    const strictCache = await startCacheService();
    const strict = await startAuth(strictCache.address, {
      MessageBroker__NotificationsTopic: sms.topic,
      Otp__ResendCooldownSeconds: '0',
      Otp__MaxPerPhone: '1',
      Otp__MaxPerIp: '2',
      Otp__MaxPerPrefix: '1',
      Otp__MaxPerMinute: '5',
      Otp__BlockedCountries: 'RU',
    });
    try {
      const post = (phoneNumber: string, ip: string): Promise<Reply> => strict.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': ip });
      const [p1, p2, p3, p4, p5, p6, p7] = numbersInDistinctPrefixes(7) as [string, string, string, string, string, string, string];
      // Another number of p1's prefix (+49 151 and the next 3 digits).
      const sibling = `${p1.slice(0, 9)}${String((Number(p1.slice(9)) + 1) % 100_000).padStart(5, '0')}`;

      const cooldownNumber = mobileNumberIn('DE');
      expect((await request(defaults, cooldownNumber)).status).toBe(200);
      expectRefused(await request(defaults, cooldownNumber), 429, 'resend_cooldown', 30);

      expect((await post(p1, '192.0.2.1')).status).toBe(200);
      expectRefused(await post(p1, '192.0.2.2'), 429, 'phone_limit', 3600);
      expect((await post(p2, '192.0.2.1')).status).toBe(200);
      expectRefused(await post(p3, '192.0.2.1'), 429, 'ip_limit', 3600);
      expectRefused(await post(sibling, '192.0.2.3'), 429, 'prefix_limit', 3600);
      expectRefused(await post(mobileNumberIn('RU'), '192.0.2.4'), 403, 'country_not_allowed');
      expectRefused(await post('+499001234567', '192.0.2.5'), 422, 'number_type_not_allowed');
      for (const [i, phoneNumber] of [p4, p5, p6].entries()) expect((await post(phoneNumber, `192.0.2.${10 + i}`)).status).toBe(200);
      expectRefused(await post(p7, '192.0.2.20'), 503, 'sms_budget_exhausted', 60);

      for (const reason of ['phone_limit', 'ip_limit', 'prefix_limit', 'country_not_allowed', 'number_type_not_allowed', 'sms_budget_exhausted']) {
        expect({ reason, count: await counterValue(strict.registry, 'auth_otp_refused_total', { reason }) }).toEqual({ reason, count: 1 });
      }
      expect(await counterValue(defaults.registry, 'auth_otp_refused_total', { reason: 'resend_cooldown' })).toBeGreaterThanOrEqual(1);
    } finally {
      await strict.close();
      await strictCache.close();
    }
  });
});
