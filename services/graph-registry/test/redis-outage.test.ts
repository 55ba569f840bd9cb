import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { send } from './support/http-client.js';
import { eventually } from '../../../test/support/eventually.js';
import { client, startRegistry, type Client, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS, STALL_MS } from '../../../test/support/progress.js';
import { DEFAULT_NO_REPLY_TIMEOUT_MS } from '@sp/storage';

describe('graph registry when Redis goes away and comes back', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;
  let api: Client;
  // Fail-fast is shown by an answer coming while Redis is still down or hung: a registry that
  // waited for Redis would not answer before it came back, however long the caller waited. So the
  // caller waits as long as a stuck wait takes (STALL_MS), not a guess at a quiet machine's speed
  // (CI's run, on a busy machine, answered the hung case in 2.0 s where a 1.5 s bound was set).
  let patient: Client;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url });
    api = client(registry.baseUrl);
    patient = client(registry.baseUrl, undefined, STALL_MS);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await redis.stop();
  });

  it('should answer 503 while Redis is down, without waiting for it, keep /health at 200, fail /readyz naming the store, and recover without a restart', async () => {
    expect((await api.registerGraph('orders', 'http://orders.example.com/graphql')).status).toBe(204);
    expect((await api.storeSchema('type Query { a: Int }')).status).toBe(201);

    await redis.stop();
    const calls = [
      () => patient.get('/orders'),
      () => patient.registerGraph('orders', 'http://other.example.com/graphql'),
      () => patient.delete('/orders'),
      () => patient.get('/'),
      () => patient.get('/schema'),
      () => patient.storeSchema('type Query { b: Int }'),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: 'redis is unavailable' });
    }
    const health = await api.get('/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });

    const readyz = await send(registry.managementUrl, { method: 'GET', path: '/readyz', timeoutMs: STALL_MS });
    expect(readyz.status).toBe(503);
    expect(readyz.json).toMatchObject({ status: 'unavailable', failing: ['redis'] });
    const metrics = await send(registry.managementUrl, { method: 'GET', path: '/metrics' });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/http_requests_total\{method="GET",route="\/:name",status="503",service="graph-registry"\} [1-9]/);

    await redis.start();
    // Redis came back empty (no persistence in the private server): the registry must work again.
    await eventually(async () => (await api.registerGraph('orders', 'http://back.example.com/graphql')).status === 204 || undefined);
    expect((await api.get('/orders')).text).toBe('http://back.example.com/graphql');
    expect((await send(registry.managementUrl, { method: 'GET', path: '/readyz' })).status).toBe(200);
  }, HANG_GUARD_MS);

  it('should answer 503 once the no-reply timeout has passed when Redis hangs instead of refusing', async () => {
    await eventually(async () => (await api.get('/health')).status === 200 && (await api.get('/')).status === 200 || undefined);
    redis.pause();
    try {
      const res = await patient.get('/orders');
      expect(res.status).toBe(503);
      // It waited for the reply (a hung Redis accepts the command), then gave up at the timeout.
      expect(res.durationMs).toBeGreaterThanOrEqual(DEFAULT_NO_REPLY_TIMEOUT_MS - 50);
      expect((await patient.get('/health')).status).toBe(200);
    } finally {
      redis.resume();
    }
    await eventually(async () => (await api.get('/')).status === 200 || undefined);
  }, HANG_GUARD_MS);
});
