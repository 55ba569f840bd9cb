import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import type { z } from 'zod';
import { env, parseEnv, parsedBy } from '../src/config.js';

const shape = {
  Oidc__Realm: env.string(),
  Oidc__ServerUrl: env.url(['http', 'https']),
  Cache__Port: env.port(7777),
  Feature__Enabled: env.bool(false),
  Keys: env.list(),
};


describe('parseEnv', () => {
  it('should report a missing and an invalid variable together, one line each', () => {
    const problems = configProblems(() =>
      parseEnv(shape, { Oidc__ServerUrl: 'not a url', Cache__Port: '70000', Keys: 'a' }),
    );
    expect(problems).toEqual([
      'Oidc__Realm: is required',
      'Oidc__ServerUrl: must be a URL with scheme http or https',
      expect.stringMatching(/^Cache__Port: .*65535/),
    ]);
  });

  it('should name every problem in the error message', () => {
    expect(() => parseEnv(shape, {})).toThrow(/Oidc__Realm: is required[\s\S]*Keys: is required/);
  });

  it('should apply defaults and coerce types', () => {
    const config = parseEnv(shape, {
      Oidc__Realm: 'platform',
      Oidc__ServerUrl: 'https://id.example.com',
      Feature__Enabled: 'true',
      Keys: ' k1, ,k2 ',
    });
    expect(config).toEqual({
      Oidc__Realm: 'platform',
      Oidc__ServerUrl: 'https://id.example.com',
      Cache__Port: 7777,
      Feature__Enabled: true,
      Keys: ['k1', 'k2'],
    });
  });

  it('should treat an empty value as unset', () => {
    expect(configProblems(() => parseEnv({ A: env.string() }, { A: '  ' }))).toEqual(['A: is required']);
  });

  it('should reject a boolean that is not one', () => {
    expect(configProblems(() => parseEnv({ B: env.bool(false) }, { B: 'maybe' }))).toEqual(['B: must be true or false']);
  });
});

describe('parseEnv cross checks', () => {
  it('should report a conditional requirement together with the other problems', () => {
    const problems = configProblems(() =>
      parseEnv({ Backend: env.string(), Url: env.string().optional(), Port: env.port() }, { Backend: 'redis', Port: 'x' }, (input) =>
        input.Backend === 'redis' && input.Url === undefined ? ['Url: is required when Backend is redis'] : [],
      ),
    );
    expect(problems).toEqual([expect.stringMatching(/^Port: /), 'Url: is required when Backend is redis']);
  });
});

describe('the address variables every service reads alike', () => {
  const one = <T>(schema: z.ZodType<T>, value: string): T => parseEnv({ V: schema }, { V: value }).V;
  const problem = (schema: z.ZodType<unknown>, value: string): readonly string[] => configProblems(() => parseEnv({ V: schema }, { V: value }));

  it.each([
    ['cache:7777', 'cache:7777'],
    ['grpc://cache.platform.svc:7777/', 'cache.platform.svc:7777'],
    ['dns:cache:7777', 'dns:cache:7777'],
    ['[::1]:7777', '[::1]:7777'],
    ['grpc://127.0.0.1:7777', '127.0.0.1:7777'],
  ])('should take the cache address %s as the gRPC target %s', (value, target) => {
    expect(one(env.cacheAddress(), value)).toBe(target);
  });

  it.each([['http://cache:7777'], ['cache'], ['cache:7777/path'], ['not an address']])('should refuse the cache address %s', (value) => {
    expect(problem(env.cacheAddress(), value)).toEqual(['V: must be host:port of the cache service (grpc:// or dns: prefix allowed)']);
  });

  it.each([
    ['memory://', { kind: 'memory' }],
    ['redis://:pw@redis:6379/2', { kind: 'redis', url: 'redis://:pw@redis:6379/2' }],
    ['rediss://redis.example.com:6380', { kind: 'redis', url: 'rediss://redis.example.com:6380' }],
    ['redis+sentinel://s1:26379,s2:26379/mymaster', { kind: 'redis', url: 'redis+sentinel://s1:26379,s2:26379/mymaster' }],
    ['redis+cluster://n1:6379,n2:6379', { kind: 'redis', url: 'redis+cluster://n1:6379,n2:6379' }],
  ])('should read the store URL %s', (value, store) => {
    expect(one(env.storeUrl(), value)).toEqual(store);
  });

  it.each([
    ['postgres://db', 'must be memory:// or a Redis URL (must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...)'],
    ['redis://', 'a redis:// or rediss:// URL must name a host'],
    ['redis:', 'a redis:// or rediss:// URL must name a host'],
    ['redis+sentinel://s1:26379', 'a redis+sentinel URL must name the master: redis+sentinel://host:26379/mymaster'],
  ])('should refuse the store URL %s, saying why', (value, why) => {
    expect(problem(env.storeUrl(), value)).toEqual([`V: ${why}`]);
  });

  it('should take a Redis URL of several sentinels and refuse memory:// where only Redis will do', () => {
    expect(one(env.redisUrl(), 'redis+sentinel://:pw@s1:26379,s2:26379/mymaster/1')).toBe('redis+sentinel://:pw@s1:26379,s2:26379/mymaster/1');
    expect(problem(env.redisUrl(), 'memory://')).toEqual(['V: must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...']);
  });

  it('should report what a parser throws as the variable problem', () => {
    const positive = (value: string): number => {
      if (!/^\d+$/.test(value)) throw new Error('must be digits');
      return Number(value);
    };
    expect(one(env.string().transform(parsedBy(positive)), '42')).toBe(42);
    expect(problem(env.string().transform(parsedBy(positive)), '-1')).toEqual(['V: must be digits']);
  });
});
