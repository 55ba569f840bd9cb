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

  it("should set the gRPC transport's limits from Grpc__*, the request size from Cache__MaxValueBytes and the answer size from both", () => {
    const { grpc } = loadConfig({ Grpc__MaxConnections: '50', Grpc__WriteTimeoutMs: '0', Grpc__KeepalivePermitWithoutStream: 'true', Cache__MaxValueBytes: String(6 * 1024 * 1024), Grpc__ConnectionBufferBytes: String(16 * 1024 * 1024) });
    expect(grpc).toMatchObject({ maxConnections: 50, writeTimeoutMs: 0, keepalivePermitWithoutStream: true, connectionBufferBytes: 16 * 1024 * 1024, maxSendMessageBytes: 6 * 1024 * 1024 + 4096 });
    expect(loadConfig({}).grpc.maxSendMessageBytes).toBe(4 * 1024 * 1024);
  });

  it('should refuse transport limits that cannot work together, naming the variables', () => {
    expect(configProblems(() => loadConfig({ Cache__MaxValueBytes: String(10 * 1024 * 1024), Grpc__MaxAnswerBytes: String(1024 * 1024), Grpc__StreamWindowBytes: '1000' }))).toEqual([
      'Grpc__ConnectionBufferBytes: must be at least Cache__MaxValueBytes + 4096 (10489856), or the largest request could never be read',
      'Grpc__StreamWindowBytes: must be from 65535 (HTTP/2\'s default window) to 2147483647',
      'Grpc__MaxAnswerBytes: must be at least Cache__MaxValueBytes + 4096 (10489856), or a Get of the largest value could not be answered',
    ]);
  });
});
