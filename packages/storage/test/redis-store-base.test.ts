import { describe, expect, it } from '@jest/globals';
import { AppError } from '@sp/core';
import { toRedisStoreError } from '../src/redis-store-base.js';

/** An error reply as ioredis rejects with it (its ReplyError, recognised by name). */
const reply = (message: string): Error => Object.assign(new Error(message), { name: 'ReplyError' });

describe('toRedisStoreError', () => {
  it.each(['CLUSTERDOWN The cluster is down', 'TRYAGAIN Multiple keys request during rehashing of slot', 'MOVED 3999 127.0.0.1:6381', 'ASK 3999 127.0.0.1:6381', 'READONLY You can\'t write against a read only replica.', 'MASTERDOWN Link with MASTER is down', 'LOADING Redis is loading the dataset in memory'])(
    'should answer 503 for the failover reply %s',
    (message) => {
      expect(toRedisStoreError(reply(message), { dependency: 'store' })).toMatchObject({ status: 503, message: 'store is unavailable' });
    },
  );

  it('should answer 500 for another error reply, unless the store gives it a meaning', () => {
    expect(toRedisStoreError(reply('WRONGTYPE Operation against a key holding the wrong kind of value'))).toMatchObject({ status: 500, code: 'redis_error' });
    const mine = new AppError(409, 'not_a_counter', 'not a counter');
    expect(toRedisStoreError(reply('NOTCOUNTER x'), { mapReplyError: (err) => (err.message.startsWith('NOTCOUNTER') ? mine : undefined) })).toBe(mine);
  });

  it('should answer 503 for a refused, closed or timed-out connection', () => {
    expect(toRedisStoreError(new Error('Connection is closed.'))).toMatchObject({ status: 503, message: 'redis is unavailable' });
  });
});
