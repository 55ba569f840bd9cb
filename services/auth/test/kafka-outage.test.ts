import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually } from '../../../test/support/eventually.js';
import { startPrivateKafka, type PrivateKafka } from '../../../test/support/kafka-broker.js';
import { collectEvents } from '../../../test/support/kafka.js';
import { startAuth, type RunningAuth } from './support/auth-fixture.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';


describe('POST /otp while the message broker is down', () => {
  let kafka: PrivateKafka;
  let cacheService: RunningCacheService;
  let auth: RunningAuth;

  beforeAll(async () => {
    [kafka, cacheService] = await startAll<[PrivateKafka, RunningCacheService]>([
      [startPrivateKafka(), (started) => started.close()],
      [startCacheService(), (started) => started.close()],
    ]);
    auth = await startAuth(cacheService.address, { MessageBroker__BrokerList: kafka.brokers, MessageBroker__PublishTimeoutMs: '3000', Otp__ResendCooldownSeconds: '0' });
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await auth?.close();
    await cacheService?.close();
    await kafka?.close();
  });

  it('should answer 503 and leave no usable code behind, then work again once the broker is back', async () => {
    // The producer is connected before the outage.
    const before = newPhoneNumber();
    expect((await auth.client.post('/otp', { phoneNumber: before }, { 'x-forwarded-for': '192.0.2.50' })).status).toBe(200);
    expect(await auth.cache.get(`otp:${before}:secret`)).toEqual(expect.any(String));

    await kafka.stop();
    const phoneNumber = newPhoneNumber();
    const refused = await auth.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': '192.0.2.51' });
    expect(refused.status).toBe(503);
    expect(refused.json()).toEqual({ error: 'message broker is unavailable' });
    // No code exists that was never sent: the secret is gone, so every code is refused.
    expect(await auth.cache.get(`otp:${phoneNumber}:secret`)).toBeUndefined();
    const verify = await auth.client.post('/otp/verify', { phoneNumber, code: '000000' }, { 'x-role-claim': 'client' });
    expect(verify.status).toBe(400);
    expect(verify.json()).toEqual({ error: 'code expired or was never requested; request a new one' });
    const readiness = await fetch(`${auth.managementUrl}/readyz`);
    expect(readiness.status).toBe(503);
    expect(((await readiness.json()) as { failing: string[] }).failing).toEqual(['kafka']);

    await kafka.start();
    const again = await eventually(
      async () => {
        const reply = await auth.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': '192.0.2.52' });
        if (reply.status !== 200) throw new Error(`POST /otp answered ${reply.status}`);
        return reply;
      },
      30_000,
      'POST /otp answering 200',
    );
    expect(again.status).toBe(200);
    expect(await auth.cache.get(`otp:${phoneNumber}:secret`)).toEqual(expect.any(String));
    const events = await collectEvents(['notifications'], [kafka.brokers]);
    try {
      const sms = await events.waitFor((event) => event.key === phoneNumber);
      expect(sms.value).toMatchObject({ phoneNumber, resourceKey: 'Otp.LoginCode' });
    } finally {
      await events.close();
    }
  }, 90_000);
});
