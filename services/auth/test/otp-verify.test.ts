import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { counterValue, startAuth, type RunningAuth } from './support/auth-fixture.js';
import type { Reply } from './support/https-client.js';
import { deleteUsersNamed } from './support/keycloak.js';
import { newPhoneNumber } from './support/phones.js';
import { startAll } from '../../../test/support/start-all.js';

/** A refusal of /otp/verify: 400, an error message, no cookie and nothing that looks like a token. */
function expectRefused(reply: Reply, message: string | RegExp): void {
  expect(reply.status).toBe(400);
  expect(reply.json().error).toEqual(typeof message === 'string' ? message : expect.stringMatching(message));
  expect(reply.cookies).toEqual([]);
  expect(reply.headers.get('authorization')).toBeNull();
  expect(reply.text).not.toMatch(/TokenId|eyJ/);
}

/** Any 6 digits but `code`. */
const otherCode = (code: string): string => String((Number(code) + 1) % 1_000_000).padStart(6, '0');

describe('POST /otp/verify refusals (Development mode: /otp answers with the code)', () => {
  let cacheService: RunningCacheService;
  let auth: RunningAuth;
  let shortLived: RunningAuth;
  const loggedIn = new Set<string>();

  beforeAll(async () => {
    cacheService = await startCacheService();
    [auth, shortLived] = await startAll<[RunningAuth, RunningAuth]>([
      [startAuth(cacheService.address, { ASPNETCORE_ENVIRONMENT: 'Development' }), (started) => started.close()],
      [startAuth(cacheService.address, { ASPNETCORE_ENVIRONMENT: 'Development', Otp__TtlSeconds: '1' }), (started) => started.close()],
    ]);
  });

  afterAll(async () => {
    await deleteUsersNamed(loggedIn);
    await Promise.all([auth.close(), shortLived.close()]);
    await cacheService.close();
  });

  /** A code for a fresh number, each from its own client IP (so the per-IP limit never interferes). */
  async function issue(target: RunningAuth = auth): Promise<{ phoneNumber: string; code: string }> {
    const phoneNumber = newPhoneNumber();
    const reply = await target.client.post('/otp', { phoneNumber }, { 'x-forwarded-for': `10.${randomBytes(3).join('.')}` });
    expect(reply.status).toBe(200);
    const { code } = reply.json<{ code: string }>();
    expect(code).toMatch(/^\d{6}$/);
    return { phoneNumber, code };
  }

  /** `role` null: no X-Role-Claim header at all. */
  const verify = async (body: Record<string, unknown>, role: string | null = 'client', target: RunningAuth = auth): Promise<Reply> => {
    const reply = await target.client.post('/otp/verify', body, role === null ? {} : { 'x-role-claim': role });
    if (reply.status === 200) loggedIn.add(String(body.phoneNumber));
    return reply;
  };

  it('should refuse a missing or unknown X-Role-Claim before looking at the code', async () => {
    const { phoneNumber, code } = await issue();
    expectRefused(await verify({ phoneNumber, code }, null), 'X-Role-Claim header is required');
    expectRefused(await verify({ phoneNumber, code }, 'admin'), 'X-Role-Claim must be client or subscriber');
    expectRefused(await verify({ phoneNumber, code }, 'Client'), 'X-Role-Claim must be client or subscriber');
    // Neither used up an attempt: the right code still works.
    expect((await verify({ phoneNumber, code })).status).toBe(200);
  });

  it('should refuse an invalid phone number and a malformed code', async () => {
    const { phoneNumber } = await issue();
    expectRefused(await verify({ phoneNumber: '+49 123', code: '123456' }), /^phoneNumber must be a valid phone number/);
    expectRefused(await verify({ code: '123456' }), 'phoneNumber is required');
    expectRefused(await verify({ phoneNumber, code: '12345' }), 'code must be a string of 6 digits');
    expectRefused(await verify({ phoneNumber, code: 123456 }), 'code must be a string of 6 digits');
    expect(await counterValue(auth.registry, 'otp_verifications_total', { result: 'bad_request' })).toBeGreaterThanOrEqual(4);
  });

  it('should refuse a wrong code and a reused code', async () => {
    const { phoneNumber, code } = await issue();
    expectRefused(await verify({ phoneNumber, code: otherCode(code) }), 'invalid code');
    expect((await verify({ phoneNumber, code })).status).toBe(200);
    expectRefused(await verify({ phoneNumber, code }), 'code already used; request a new one');
    expect(await counterValue(auth.registry, 'otp_verifications_total', { result: 'reused' })).toBeGreaterThanOrEqual(1);
  });

  it('should refuse the 6th attempt after 5 wrong codes even with the right code', async () => {
    const { phoneNumber, code } = await issue();
    for (let attempt = 1; attempt <= 5; attempt++) expectRefused(await verify({ phoneNumber, code: otherCode(code) }), 'invalid code');
    expectRefused(await verify({ phoneNumber, code }), 'too many wrong codes; request a new one');
    expect(await auth.cache.get(`otp:${phoneNumber}:secret`)).toBeUndefined();
    expect(await counterValue(auth.registry, 'otp_verifications_total', { result: 'too_many_attempts' })).toBeGreaterThanOrEqual(1);
  });

  it('should accept the right code after 4 wrong ones', async () => {
    const { phoneNumber, code } = await issue();
    for (let attempt = 1; attempt <= 4; attempt++) expectRefused(await verify({ phoneNumber, code: otherCode(code) }), 'invalid code');
    expect((await verify({ phoneNumber, code })).status).toBe(200);
  });

  it('should refuse an expired code', async () => {
    const { phoneNumber, code } = await issue(shortLived);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expectRefused(await verify({ phoneNumber, code }, 'client', shortLived), 'code expired or was never requested; request a new one');
    expectRefused(await verify({ phoneNumber: newPhoneNumber(), code }), 'code expired or was never requested; request a new one');
    expect(await counterValue(shortLived.registry, 'otp_verifications_total', { result: 'expired' })).toBe(1);
  });

  it('should let exactly one of two concurrent verifications of the right code succeed', async () => {
    const { phoneNumber, code } = await issue();
    const replies = await Promise.all([verify({ phoneNumber, code }), verify({ phoneNumber, code, locale: 'es' }, 'subscriber')]);
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 400]);
    const refused = replies.find((reply) => reply.status === 400)!;
    expectRefused(refused, 'code already used; request a new one');
    expect(replies.find((reply) => reply.status === 200)!.cookies).toHaveLength(1);
  });

  it('should refuse bodies that are not JSON objects, too large, or of another media type', async () => {
    const headers = { 'x-role-claim': 'client' };
    const notJson = await auth.client.request('POST', '/otp/verify', { headers: { ...headers, 'content-type': 'application/json' }, body: '{"phoneNumber":' });
    expectRefused(notJson, 'body must be a JSON object');
    expectRefused(await auth.client.post('/otp/verify', ['+4915123456789'], headers), 'body must be a JSON object');
    const form = await auth.client.request('POST', '/otp/verify', { headers: { ...headers, 'content-type': 'application/x-www-form-urlencoded' }, body: 'phoneNumber=1' });
    expect(form.status).toBe(415);
    const large = await auth.client.post('/otp', { phoneNumber: newPhoneNumber(), padding: 'x'.repeat(17 * 1024) });
    expect(large.status).toBe(413);
    expect(large.json()).toEqual({ error: 'body exceeds 16384 bytes' });
  });

  it('should check the media type before the size: 2 MiB of text/plain is 415, not 413', async () => {
    const headers = { 'x-role-claim': 'client', 'content-type': 'text/plain' };
    const answer = await auth.client.request('POST', '/otp', { headers, body: 'x'.repeat(2 * 1024 * 1024) });
    expect(answer.status).toBe(415);
    expect(answer.json()).toEqual({ error: 'content type must be one of: application/json' });
  });

  it('should answer 405 with Allow for another method and 404 for another path', async () => {
    const get = await auth.client.get('/otp/verify');
    expect(get.status).toBe(405);
    expect(get.headers.get('allow')).toBe('POST');
    expect((await auth.client.get('/nope')).status).toBe(404);
  });
});
