import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import { loadConfig } from '../src/config.js';

describe('cache configuration', () => {
  it.each([['redis+sentinel://:pw@s1:26379,s2:26379,s3:26379/mymaster'], ['redis+cluster://n1:6379,n2:6379'], ['rediss://:pw@redis.example.com:6380/1']])(
    'should take Cache__RedisUrl=%s, as docs/scaling.md lists it',
    (url) => {
      expect(loadConfig({ Cache__Backend: 'redis', Cache__RedisUrl: url }).backend).toEqual({ kind: 'redis', url, keyPrefix: 'cache:' });
    },
  );

  it('should refuse a Cache__RedisUrl that is no Redis URL, or names no Sentinel master', () => {
    expect(configProblems(() => loadConfig({ Cache__Backend: 'redis', Cache__RedisUrl: 'http://redis:6379' }))).toEqual([
      'Cache__RedisUrl: must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...',
    ]);
    expect(configProblems(() => loadConfig({ Cache__Backend: 'redis', Cache__RedisUrl: 'redis+sentinel://s1:26379' }))).toEqual([expect.stringMatching(/^Cache__RedisUrl: a redis\+sentinel URL must name the master/)]);
  });
});
