import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { send } from './support/http-client.js';
import { eventually } from '../../../test/support/eventually.js';
import { client, startRegistry, type Client, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

describe('graph registry when Redis goes away and comes back', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;
  let api: Client;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url });
    api = client(registry.baseUrl);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await redis.stop();
  });

  it('should answer 503 quickly while Redis is down, keep /health at 200, fail /readyz naming the store, and recover without a restart', async () => {
    expect((await api.registerGraph('orders', 'http://orders.example.com/graphql')).status).toBe(204);
    expect((await api.storeSchema('type Query { a: Int }')).status).toBe(201);

    await redis.stop();
    const calls = [
      () => api.get('/orders'),
      () => api.registerGraph('orders', 'http://other.example.com/graphql'),
      () => api.delete('/orders'),
      () => api.get('/'),
      () => api.get('/schema'),
      () => api.storeSchema('type Query { b: Int }'),
    ];
    for (const call of calls) {
      const res = await call();
      expect(res.status).toBe(503);
      expect(res.json).toEqual({ error: 'redis is unavailable' });
      expect(res.durationMs).toBeLessThan(1500);
    }
    const health = await api.get('/health');
    expect(health.status).toBe(200);
    expect(health.json).toEqual({ status: 'ok' });

    const readyz = await send(registry.managementUrl, { method: 'GET', path: '/readyz' });
    expect(readyz.status).toBe(503);
    expect(readyz.json).toMatchObject({ status: 'unavailable', failing: ['redis'] });
    expect(readyz.durationMs).toBeLessThan(2500);
    const metrics = await send(registry.managementUrl, { method: 'GET', path: '/metrics' });
    expect(metrics.status).toBe(200);
    expect(metrics.text).toMatch(/http_requests_total\{method="GET",route="\/:name",status="503",service="graph-registry"\} [1-9]/);

    await redis.start();
    // Redis came back empty (no persistence in the private server): the registry must work again.
    await eventually(async () => (await api.registerGraph('orders', 'http://back.example.com/graphql')).status === 204 || undefined);
    expect((await api.get('/orders')).text).toBe('http://back.example.com/graphql');
    expect((await send(registry.managementUrl, { method: 'GET', path: '/readyz' })).status).toBe(200);
  });

  it('should answer 503 within the no-reply timeout when Redis hangs instead of refusing', async () => {
    await eventually(async () => (await api.get('/health')).status === 200 && (await api.get('/')).status === 200 || undefined);
    redis.pause();
    try {
      const res = await api.get('/orders');
      expect(res.status).toBe(503);
      expect(res.durationMs).toBeLessThan(1500);
      expect((await api.get('/health')).status).toBe(200);
    } finally {
      redis.resume();
    }
    await eventually(async () => (await api.get('/')).status === 200 || undefined);
  });
});
