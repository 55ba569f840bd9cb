import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import type { GraphStore } from '../src/graphs/graph-store.js';
import { createMemoryGraphStore } from '../src/graphs/memory-graph-store.js';
import { connectRedis } from '@sp/storage';
import { createRedisGraphStore } from '../src/graphs/redis-graph-store.js';
import { silentLogger } from './support/registry-fixture.js';

/** Every page of `listUrls`, in one map (keeping the order the pages give). */
async function allUrls(store: GraphStore): Promise<Map<string, string>> {
  const all = new Map<string, string>();
  for await (const page of store.listUrls()) for (const [name, url] of page) all.set(name, url);
  return all;
}

interface Backend {
  store: GraphStore;
  reset(): Promise<void>;
  close(): Promise<void>;
}

const backends: Array<[string, () => Promise<Backend>]> = [
  [
    'memory',
    () => {
      let store = createMemoryGraphStore();
      return Promise.resolve({
        get store() {
          return store;
        },
        reset: () => {
          store = createMemoryGraphStore();
          return Promise.resolve();
        },
        close: () => store.close(),
      });
    },
  ],
  [
    'redis',
    async () => {
      const redis: PrivateRedis = await startPrivateRedis();
      const direct = new Redis(redis.url);
      const store = createRedisGraphStore(connectRedis({ kind: 'standalone', url: redis.url }), silentLogger);
      return {
        store,
        reset: async () => {
          await direct.flushdb();
        },
        close: async () => {
          await store.close();
          direct.disconnect();
          await redis.stop();
        },
      };
    },
  ],
];

describe.each(backends)('graph store contract, %s', (_name, create) => {
  let backend: Backend;

  beforeAll(async () => {
    backend = await create();
  });

  afterAll(async () => {
    await backend.close();
  });

  beforeEach(async () => {
    await backend.reset();
  });

  it('should start empty', async () => {
    const { store } = backend;
    expect(await store.getUrl('a')).toBeUndefined();
    expect(await store.getSchema()).toBeUndefined();
    expect(await allUrls(store)).toEqual(new Map());
    expect(await store.countGraphs()).toBe(0);
    expect(await store.schemaBytes()).toBe(0);
    await expect(store.check()).resolves.toBeUndefined();
  });

  it('should set, replace, list, count and delete URLs', async () => {
    const { store } = backend;
    await store.setUrl('b', 'http://b/');
    await store.setUrl('a', 'http://a/');
    await store.setUrl('b', 'http://b2/');
    expect(await store.getUrl('b')).toBe('http://b2/');
    expect([...(await allUrls(store)).entries()]).toEqual([
      ['a', 'http://a/'],
      ['b', 'http://b2/'],
    ]);
    expect(await store.countGraphs()).toBe(2);
    expect(await store.deleteUrl('a')).toBe(true);
    expect(await store.deleteUrl('a')).toBe(false);
    expect(await store.countGraphs()).toBe(1);
  });

  it('should keep the schema apart from the graphs and measure it in bytes', async () => {
    const { store } = backend;
    await store.setSchema('type Query { é: Int }');
    expect(await store.getSchema()).toBe('type Query { é: Int }');
    expect(await store.schemaBytes()).toBe(Buffer.byteLength('type Query { é: Int }'));
    expect(await store.countGraphs()).toBe(0);
    expect(await allUrls(store)).toEqual(new Map());
  });
});
