import { expect } from '@jest/globals';
import type { EventCollector } from '../../../../test/support/kafka.js';
import type { RunningAuth } from './auth-fixture.js';
import { cookieValue } from './https-client.js';

/**
 * A whole OTP login through one instance (the code read from the SMS event on `notifications`;
 * one login per phone number, the first code sent to it is taken):
 * the `Cookie` header value that carries its session. `headers` go with both requests (an
 * X-Forwarded-For of the test's own, a User-Agent).
 */
export async function otpLogin(auth: RunningAuth, events: EventCollector, phoneNumber: string, headers: Record<string, string> = {}): Promise<string> {
  expect((await auth.client.post('/otp', { phoneNumber }, headers)).status).toBe(200);
  const sms = await events.waitFor((event) => event.topic === 'notifications' && event.key === phoneNumber);
  const verified = await auth.client.post('/otp/verify', { phoneNumber, code: String(sms.value.code) }, { 'x-role-claim': 'subscriber', ...headers });
  expect(verified.status).toBe(200);
  return `TokenId=${cookieValue(verified.cookies, 'TokenId')!}`;
}
