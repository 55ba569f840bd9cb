import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseRedisUrl, type AppError } from '@sp/core';
import { connectRedis } from '@sp/storage';
import { createMemoryProcessingStore } from '../src/events/memory-processing-store.js';
import { processOnce, withClaim, type ProcessOnceOptions } from '../src/events/process-once.js';
import { createRedisProcessingStore } from '../src/events/redis-processing-store.js';
import type { ProcessingStore } from '../src/events/processing-store.js';
import { startPrivateRedis, type PrivateRedis } from '../../../test/support/redis-server.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { startTcpProxy } from '../../../test/support/tcp-proxy.js';
import { eventually } from '../../../test/support/eventually.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const options: ProcessOnceOptions = { leaseMs: 2000, retentionMs: 60_000, waitMs: 400, pollMs: 20 };

let redis: PrivateRedis;
let store: ProcessingStore;

beforeAll(async () => {
  redis = await startPrivateRedis();
  store = createRedisProcessingStore(connectRedis(parseRedisUrl(redis.url)), silentLogger(), 'test:');
}, HANG_GUARD_MS);

afterAll(async () => {
  await store?.close();
  await redis?.stop();
});

describe.each([
  ['redis', () => store],
  ['memory', () => createMemoryProcessingStore()],
])('the %s processing store', (_name, storeOf) => {
  it('should hand the claim to one caller, report it busy to others, and done after completion', async () => {
    const processing = storeOf();
    const first = await processing.claim('evt_a', 1000);
    expect(first.state).toBe('claimed');
    expect(await processing.claim('evt_a', 1000)).toEqual({ state: 'busy' });
    await processing.complete('evt_a', (first as { token: string }).token, 60_000);
    expect(await processing.claim('evt_a', 1000)).toEqual({ state: 'done' });
  });

  it('should let a released or expired claim be taken again, and ignore a release by someone else', async () => {
    const processing = storeOf();
    const first = (await processing.claim('evt_b', 1000)) as { token: string };
    await processing.release('evt_b', 'not-my-token');
    expect((await processing.claim('evt_b', 1000)).state).toBe('busy');
    await processing.release('evt_b', first.token);
    expect((await processing.claim('evt_b', 50)).state).toBe('claimed');
    await new Promise((resolve) => setTimeout(resolve, 80));
    expect((await processing.claim('evt_b', 1000)).state).toBe('claimed');
  });

  it('should remember an object version and a tombstone, and forget them after the retention', async () => {
    const processing = storeOf();
    expect(await processing.readVersion('product:prod_v')).toBeNull();
    await processing.recordVersion('product:prod_v', { created: 1_700_000_000, deleted: false }, 60_000);
    expect(await processing.readVersion('product:prod_v')).toEqual({ created: 1_700_000_000, deleted: false });
    await processing.recordVersion('product:prod_v', { created: 1_700_000_100, deleted: true }, 60);
    expect(await processing.readVersion('product:prod_v')).toEqual({ created: 1_700_000_100, deleted: true });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await processing.readVersion('product:prod_v')).toBeNull();
  });

  it('should never lower a recorded version nor bring an object back from its tombstone', async () => {
    const processing = storeOf();
    await processing.recordVersion('product:prod_m', { created: 1_700_000_100, deleted: false }, 60_000);
    await processing.recordVersion('product:prod_m', { created: 1_700_000_050, deleted: false }, 60_000);
    expect(await processing.readVersion('product:prod_m')).toEqual({ created: 1_700_000_100, deleted: false });
    await processing.recordVersion('product:prod_m', { created: 1_700_000_100, deleted: true }, 60_000);
    await processing.recordVersion('product:prod_m', { created: 1_700_000_900, deleted: false }, 60_000);
    expect(await processing.readVersion('product:prod_m')).toEqual({ created: 1_700_000_100, deleted: true });
  });
});

describe('the redis processing store when a claim\'s reply is lost', () => {
  it('should drop the claim it may have taken, so redeliveries are not refused for the whole lease', async () => {
    const proxy = await startTcpProxy(new URL(`http://127.0.0.1:${new URL(redis.url).port}`));
    const direct = connectRedis(parseRedisUrl(redis.url));
    const viaProxy = createRedisProcessingStore(connectRedis(parseRedisUrl(`redis://127.0.0.1:${new URL(proxy.url).port}`)), silentLogger(), 'test:');
    try {
      await eventually(() => viaProxy.check().then(() => true));
      proxy.loseNextReply();
      await expect(viaProxy.claim('evt_lost_reply', 60_000)).rejects.toMatchObject({ status: 503 });
      // Redis ran the script: the claim is there, and nobody holds its token.
      expect(await direct.exists('test:{evt_lost_reply}:claim')).toBe(1);
      // A redelivery soon after takes the event instead of meeting a claim for 60 s.
      await eventually(async () => (await viaProxy.claim('evt_lost_reply', 60_000)).state === 'claimed', 5000);
    } finally {
      await viaProxy.close();
      direct.disconnect();
      await proxy.close();
    }
  });
});

describe('withClaim', () => {
  it('should run the work of concurrent callers on one key one at a time, each of them', async () => {
    let running = 0;
    let most = 0;
    const work = async (): Promise<void> => {
      most = Math.max(most, ++running);
      await new Promise((resolve) => setTimeout(resolve, 20));
      running--;
    };
    await Promise.all(Array.from({ length: 5 }, () => withClaim(store, 'object:product:prod_lock', work, { ...options, waitMs: 2000 })));
    expect(most).toBe(1);
    // Released, never completed: the key can be claimed again.
    expect((await store.claim('object:product:prod_lock', 1000)).state).toBe('claimed');
  });
});

describe('processOnce', () => {
  it('should run the work once for concurrent callers and report the others as duplicates', async () => {
    let runs = 0;
    const work = async (): Promise<string> => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      return 'done';
    };
    const outcomes = await Promise.all(Array.from({ length: 10 }, () => processOnce(store, 'evt_c', work, options)));
    expect(runs).toBe(1);
    expect(outcomes.filter((o) => o.duplicate)).toHaveLength(9);
  });

  it('should let a waiting duplicate take over when the first attempt fails', async () => {
    let runs = 0;
    const work = async (): Promise<string> => {
      runs++;
      await new Promise((resolve) => setTimeout(resolve, 30));
      if (runs === 1) throw new Error('gateway down');
      return 'done';
    };
    const [first, second] = await Promise.allSettled([processOnce(store, 'evt_d', work, options), processOnce(store, 'evt_d', work, options)]);
    expect(first.status).toBe('rejected');
    expect(second).toEqual({ status: 'fulfilled', value: { duplicate: false, value: 'done' } });
    expect(runs).toBe(2);
  });

  it('should answer 409 with Retry-After while another delivery is still processing past the wait', async () => {
    const slow = processOnce(store, 'evt_e', () => new Promise((resolve) => setTimeout(resolve, 800)), options);
    await new Promise((resolve) => setTimeout(resolve, 20));
    const error = (await processOnce(store, 'evt_e', () => Promise.resolve(), options).catch((err: unknown) => err)) as AppError;
    expect(error.status).toBe(409);
    expect(error.headers['Retry-After']).toBe('1');
    await slow;
  });

  it('should fail with 503 without running the work while the store is down, and work again once it is back', async () => {
    await redis.stop();
    let runs = 0;
    try {
      const error = (await processOnce(store, 'evt_f', () => Promise.resolve(runs++), options).catch((err: unknown) => err)) as AppError;
      expect(error.status).toBe(503);
      expect(error.message).toBe('store is unavailable');
      expect(runs).toBe(0);
    } finally {
      await redis.start();
    }
    for (let attempt = 0; ; attempt++) {
      try {
        await processOnce(store, 'evt_f', () => Promise.resolve(runs++), options);
        break;
      } catch (err) {
        if (attempt > 50) throw err;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    expect(runs).toBe(1);
  });
});
