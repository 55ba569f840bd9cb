import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { eventually } from '../../../test/support/eventually.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { parseRedisUrl } from '@sp/core';
import { connectRedis } from '../src/redis.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const NO_REPLY_TIMEOUT_MS = 400;


describe('connectRedis', () => {
  let redis: PrivateRedis;
  let client: Redis;
  const connectionErrors: string[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = connectRedis(parseRedisUrl(redis.url), NO_REPLY_TIMEOUT_MS) as Redis;
    client.on('error', (err: Error) => connectionErrors.push(err.message));
    await eventually(async () => (await client.set('greeting', 'hello')) === 'OK' || undefined);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('should fail commands to a Redis that hangs within the no-reply timeout, then recover when it answers again', async () => {
    redis.pause();
    const started = Date.now();
    try {
      const outcome = await client.get('greeting').then(
        () => 'answered',
        (err: unknown) => (err instanceof Error ? err.message : String(err)),
      );
      const elapsed = Date.now() - started;
      expect(outcome).not.toBe('answered');
      expect(connectionErrors).toContain(`Socket timeout. Expecting data, but didn't receive any in ${NO_REPLY_TIMEOUT_MS}ms.`);
      expect(elapsed).toBeGreaterThanOrEqual(NO_REPLY_TIMEOUT_MS - 50);
      expect(elapsed).toBeLessThan(NO_REPLY_TIMEOUT_MS * 1.2 + 250);
    } finally {
      redis.resume();
    }
    expect(await eventually(() => client.get('greeting').then((value) => value ?? undefined))).toBe('hello');
  });

  it('should let a command wait for a Redis that stalls for less than the timeout', async () => {
    redis.pause();
    const resumed = new Promise((resolve) => setTimeout(resolve, NO_REPLY_TIMEOUT_MS * 0.6)).then(() => redis.resume());
    try {
      expect(await client.get('greeting')).toBe('hello');
      expect(client.status).toBe('ready');
    } finally {
      await resumed;
    }
  });
});
