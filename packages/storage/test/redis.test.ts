import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Redis } from 'ioredis';
import { eventually } from '../../../test/support/eventually.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { parseRedisUrl } from '@sp/core';
import { connectRedis } from '../src/redis.js';
import { createRedisStoreBase, type RedisRun } from '../src/redis-store-base.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const NO_REPLY_TIMEOUT_MS = 400;

/** Blocks this process' event loop, as a long garbage collection or a throttled container does. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

describe('connectRedis and the stores\' calls', () => {
  let redis: PrivateRedis;
  let client: Redis;
  let run: RedisRun;
  const connectionErrors: string[] = [];

  beforeAll(async () => {
    redis = await startPrivateRedis();
    client = connectRedis(parseRedisUrl(redis.url)) as Redis;
    client.on('error', (err: Error) => connectionErrors.push(err.message));
    run = createRedisStoreBase(client, { noReplyTimeoutMs: NO_REPLY_TIMEOUT_MS }).run;
    await eventually(async () => (await run(() => client.set('greeting', 'hello'))) === 'OK' || undefined);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('should fail calls to a Redis that hangs within the no-reply timeout, then recover when it answers again', async () => {
    redis.pause();
    const started = Date.now();
    try {
      const outcome = await run(() => client.get('greeting')).then(
        () => 'answered',
        (err: unknown) => (err instanceof Error ? `${(err as { status?: number }).status} ${err.message}` : String(err)),
      );
      const elapsed = Date.now() - started;
      expect(outcome).toBe('503 redis is unavailable');
      expect(connectionErrors).toContain(`no reply from Redis within ${NO_REPLY_TIMEOUT_MS} ms`);
      // At the timeout, not before it; how long after it depends on how busy the machine is (the
      // watchdog lets a stall of this process pass, see replyWatchdog), so no upper bound: without
      // the watchdog the call would wait for as long as Redis hangs, and jest's timeout fails it.
      expect(elapsed).toBeGreaterThanOrEqual(NO_REPLY_TIMEOUT_MS - 50);
    } finally {
      redis.resume();
    }
    expect(await eventually(() => run(() => client.get('greeting')).then((value) => value ?? undefined))).toBe('hello');
  });

  it('should fail every call in flight on a hung Redis at the first one\'s timeout, dropping the connection once', async () => {
    await eventually(() => client.status === 'ready' || undefined);
    const errorsBefore = connectionErrors.length;
    redis.pause();
    const started = Date.now();
    try {
      // Calls sent over half the timeout: they share the connection, and its fate.
      const calls: Array<Promise<string>> = [];
      for (let i = 0; i < 5; i++) {
        calls.push(run(() => client.get('greeting')).then(() => 'answered', (err: unknown) => `${(err as { status?: number }).status} ${Date.now() - started}`));
        await new Promise((resolve) => setTimeout(resolve, NO_REPLY_TIMEOUT_MS / 10));
      }
      const outcomes = await Promise.all(calls);
      const failedAt = outcomes.map((outcome) => Number(outcome.split(' ')[1]));
      expect(outcomes.map((outcome) => outcome.split(' ')[0])).toEqual(['503', '503', '503', '503', '503']);
      expect(Math.min(...failedAt)).toBeGreaterThanOrEqual(NO_REPLY_TIMEOUT_MS - 50);
      expect(connectionErrors.slice(errorsBefore).filter((message) => message.startsWith('no reply'))).toEqual([`no reply from Redis within ${NO_REPLY_TIMEOUT_MS} ms`]);
    } finally {
      redis.resume();
    }
    expect(await eventually(() => run(() => client.get('greeting')).then((value) => value ?? undefined))).toBe('hello');
  });

  it('should let a call wait for a Redis that stalls for less than the timeout', async () => {
    redis.pause();
    const resumed = new Promise((resolve) => setTimeout(resolve, NO_REPLY_TIMEOUT_MS * 0.6)).then(() => redis.resume());
    try {
      expect(await run(() => client.get('greeting'))).toBe('hello');
      expect(client.status).toBe('ready');
    } finally {
      await resumed;
    }
  });

  it('should take the reply that came while this process stalled past the timeout, and keep the connection', async () => {
    await eventually(() => client.status === 'ready' || undefined);
    const errorsBefore = connectionErrors.length;
    for (let i = 0; i < 5; i++) {
      const call = run(() => client.get('greeting'));
      stall(NO_REPLY_TIMEOUT_MS * 2.5);
      expect(await call).toBe('hello');
    }
    expect(client.status).toBe('ready');
    expect(connectionErrors.slice(errorsBefore)).toEqual([]);
  });

  it('should keep a healthy connection through a stall of 1.5 s with calls in flight, at the default timeout (1 s)', async () => {
    const own = connectRedis(parseRedisUrl(redis.url)) as Redis;
    const errors: string[] = [];
    own.on('error', (err: Error) => errors.push(err.message));
    const store = createRedisStoreBase(own);
    try {
      await eventually(async () => (await store.run(() => own.get('greeting'))) === 'hello' || undefined);
      for (let i = 0; i < 3; i++) {
        const sent = [store.run(() => own.get('greeting')), store.run(() => own.ping())];
        await new Promise((resolve) => setImmediate(resolve)); // written: the replies come during the stall
        const during = store.run(() => own.get('greeting')); // sent only after it
        stall(1500);
        expect(await Promise.all([...sent, during])).toEqual(['hello', 'PONG', 'hello']);
      }
      expect(own.status).toBe('ready');
      expect(errors).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
