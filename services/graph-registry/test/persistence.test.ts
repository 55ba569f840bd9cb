import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Redis } from 'ioredis';
import { infra } from '../../../test/support/infra.js';
import { client, startRegistry } from './support/registry-fixture.js';

/**
 * The shared test Redis, in a database of its own: the records must be `graph:{name}` exactly
 * (no test prefix), so names are unique to this run and only they are removed afterwards; a
 * schema found there before is put back.
 */
const DATABASE = 11;
const storeUrl = `${infra('REDIS_URL').replace(/\/\d*$/, '')}/${DATABASE}`;

describe('graph registry data across a restart of the service (shared Redis)', () => {
  const run = randomUUID().slice(0, 8);
  const names = [`persist-${run}-a`, `persist-${run}.b`];
  let direct: Redis;
  let schemaBefore: string | null;

  beforeAll(async () => {
    direct = new Redis(storeUrl);
    schemaBefore = await direct.get('graph:schema');
  });

  afterAll(async () => {
    await direct.del(...names.map((name) => `graph:${name}`));
    if (schemaBefore === null) await direct.del('graph:schema');
    else await direct.set('graph:schema', schemaBefore);
    direct.disconnect();
  });

  it('should serve the graphs and the schema stored by a previous instance', async () => {
    const sdl = `type Query { run${run.replace(/[^a-z0-9]/g, '')}: String }\n`;
    const first = await startRegistry({ kind: 'redis', url: storeUrl });
    try {
      const api = client(first.baseUrl);
      expect((await api.registerGraph(names[0]!, 'http://a.example.com/graphql')).status).toBe(204);
      expect((await api.registerGraph(names[1]!, 'https://b.example.com/graphql')).status).toBe(204);
      expect((await api.storeSchema(sdl)).status).toBe(201);
    } finally {
      await first.close();
    }

    expect(await direct.get(`graph:${names[0]}`)).toBe('http://a.example.com/graphql');
    expect(await direct.get(`graph:${names[1]}`)).toBe('https://b.example.com/graphql');
    expect(await direct.get('graph:schema')).toBe(sdl);

    const second = await startRegistry({ kind: 'redis', url: storeUrl });
    try {
      const api = client(second.baseUrl);
      expect((await api.get(`/${names[0]}`)).text).toBe('http://a.example.com/graphql');
      expect((await api.get(`/${names[1]}`)).text).toBe('https://b.example.com/graphql');
      expect((await api.get('/schema')).text).toBe(sdl);
      const listed = (await api.get('/')).json as { graphs: Record<string, string> };
      expect(listed.graphs).toMatchObject({ [names[0]!]: 'http://a.example.com/graphql', [names[1]!]: 'https://b.example.com/graphql' });
    } finally {
      await second.close();
    }
  });
});
