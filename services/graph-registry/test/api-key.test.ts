import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { API_KEY, ROTATED_API_KEY, client, startRegistry, type RunningRegistry } from './support/registry-fixture.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

/** Every route but /health, with a body where the route takes one (and one that would be valid). */
const routes = [
  ['GET', '/', undefined],
  ['GET', '/schema', undefined],
  ['POST', '/schema', 'type Query { a: Int }'],
  ['GET', '/orders', undefined],
  ['HEAD', '/orders', undefined],
  ['POST', '/orders', 'http://orders.example.com/graphql'],
  ['DELETE', '/orders', undefined],
  ['PUT', '/orders', 'http://orders.example.com/graphql'],
  ['DELETE', '/schema', undefined],
  ['GET', '/Not-A-Name', undefined],
  ['GET', '/a/b', undefined],
] as const;

const wrongKeys = [
  ['no X-Api-Key header', null],
  ['an empty key', ''],
  ['a wrong key', 'wrong'],
  ['the key with one character less', API_KEY.slice(0, -1)],
  ['the key with one character more', `${API_KEY}x`],
  ['the key in upper case', API_KEY.toUpperCase()],
  ['both keys joined by a comma', `${API_KEY},${ROTATED_API_KEY}`],
  ['the key with a space inside', `${API_KEY.slice(0, 4)} ${API_KEY.slice(4)}`],
] as const;

describe('API key', () => {
  let redis: PrivateRedis;
  let registry: RunningRegistry;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    registry = await startRegistry({ kind: 'redis', url: redis.url }, [API_KEY, ROTATED_API_KEY]);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await registry.close();
    await redis.stop();
  });

  describe.each(wrongKeys)('with %s', (_case, key) => {
    it.each(routes)('should answer 401 {"error":"unauthorized"} to %s %s', async (method, path, body) => {
      const headers = body === undefined ? {} : { 'content-type': 'text/plain' };
      const res = await client(registry.baseUrl, key).send({ method, path, headers, ...(body === undefined ? {} : { body }) });
      expect(res.status).toBe(401);
      if (method !== 'HEAD') expect(res.json).toEqual({ error: 'unauthorized' });
    });
  });

  it('should check the key before the name, the media type and the size', async () => {
    const res = await client(registry.baseUrl, 'wrong').post('POST', '/Bad%2Fname', Buffer.alloc(2 * 1024 * 1024), 'application/json');
    expect(res.status).toBe(401);
  });

  it('should store nothing for a request it refused', async () => {
    await client(registry.baseUrl, 'wrong').registerGraph('orders', 'http://orders.example.com/graphql');
    expect((await client(registry.baseUrl).get('/orders')).status).toBe(404);
  });

  it('should check every request of a keep-alive connection, also after it had a key accepted', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    let connections = 0;
    const count = (): void => {
      connections += 1;
    };
    registry.server.on('connection', count);
    try {
      const as = async (key: string | null) => (await client(registry.baseUrl, key).send({ method: 'GET', path: '/', agent })).status;
      expect(await as(API_KEY)).toBe(200);
      expect(await as('wrong')).toBe(401);
      expect(await as(null)).toBe(401);
      expect(await as(`${API_KEY}x`)).toBe(401);
      expect(await as(ROTATED_API_KEY)).toBe(200);
      expect(await as(API_KEY)).toBe(200);
      expect(await as('')).toBe(401);
      expect(connections).toBe(1);
    } finally {
      registry.server.off('connection', count);
      agent.destroy();
    }
  });

  it('should accept either key of the list, so a key can be rotated', async () => {
    expect((await client(registry.baseUrl, API_KEY).registerGraph('rotated', 'http://old.example.com/')).status).toBe(204);
    expect((await client(registry.baseUrl, ROTATED_API_KEY).get('/rotated')).text).toBe('http://old.example.com/');
    expect((await client(registry.baseUrl, ROTATED_API_KEY).registerGraph('rotated', 'http://new.example.com/')).status).toBe(204);
    expect((await client(registry.baseUrl, API_KEY).get('/rotated')).text).toBe('http://new.example.com/');
    expect((await client(registry.baseUrl, API_KEY).get('/')).status).toBe(200);
    expect((await client(registry.baseUrl, ROTATED_API_KEY).delete('/rotated')).status).toBe(204);
  });
});
