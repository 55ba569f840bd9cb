import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Cluster } from 'ioredis';
import { eventually } from '../../../test/support/eventually.js';
import { startRedisCluster, type RedisClusterSet } from '../../../test/support/redis-cluster.js';
import { HANG_GUARD_MS, STALL_MS } from '../../../test/support/progress.js';
import { parseRedisUrl } from '@sp/core';
import { connectRedis } from '../src/redis.js';
import { createRedisStoreBase, type RedisRun } from '../src/redis-store-base.js';

const NO_REPLY_TIMEOUT_MS = 400;

describe('the stores\' calls on a Redis Cluster', () => {
  let cluster: RedisClusterSet;
  let client: Cluster;
  let run: RedisRun;
  const connectionErrors: string[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    client = connectRedis(parseRedisUrl(cluster.url)) as Cluster;
    client.on('error', (err: Error) => connectionErrors.push(err.message));
    run = createRedisStoreBase(client, { noReplyTimeoutMs: NO_REPLY_TIMEOUT_MS }).run;
    await eventually(async () => (await run(() => client.ping())) === 'PONG' || undefined);
  }, HANG_GUARD_MS);

  afterAll(async () => {
    client.disconnect();
    await cluster.stop();
  });

  it('should fail a call to a primary that hangs within the no-reply timeout while the other primaries keep answering', async () => {
    // Two keys on two primaries: one to hang, one whose answers keep coming meanwhile.
    const keys = Array.from({ length: 40 }, (_, i) => `key-${i}`);
    const ports = await Promise.all(keys.map((key) => cluster.primaryPortOf(key)));
    const hungKey = keys[0]!;
    const hungPort = ports[0]!;
    const answeringKey = keys[ports.findIndex((port) => port !== hungPort)]!;
    await run(() => client.set(hungKey, 'hung'));
    await run(() => client.set(answeringKey, 'answering'));
    const hungNode = cluster.nodes.find((node) => node.port === hungPort)!;
    hungNode.pause();
    try {
      const started = Date.now();
      let answering = true;
      let answered = 0;
      const others = (async (): Promise<void> => {
        while (answering) {
          if ((await run(() => client.get(answeringKey)).catch(() => undefined)) === 'answering') answered++;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const call = run(() => client.get(hungKey)).then(
        () => 'answered',
        (err: unknown) => `${(err as { status?: number }).status} ${(err as Error).message}`,
      );
      // Without the watchdog the call waits for as long as the node hangs: any answer while it
      // still hangs shows the timeout, so the wait is bounded by STALL_MS, not by a guess at speed.
      let guard: NodeJS.Timeout | undefined;
      const outcome = await Promise.race([call, new Promise((resolve) => (guard = setTimeout(resolve, STALL_MS, `still waiting after ${STALL_MS} ms`)))]);
      clearTimeout(guard);
      const elapsed = Date.now() - started;
      answering = false;
      await others;
      expect(outcome).toBe('503 redis is unavailable');
      expect(answered).toBeGreaterThan(0);
      expect(elapsed).toBeGreaterThanOrEqual(NO_REPLY_TIMEOUT_MS - 50);
      expect(connectionErrors).toContain(`no reply from Redis within ${NO_REPLY_TIMEOUT_MS} ms`);
    } finally {
      hungNode.resume();
    }
    // The node answers again (or its replica took over): the client reconnects by itself.
    expect(await eventually(() => run(() => client.get(hungKey)).then((value) => value ?? undefined), 20_000)).toBe('hung');
  }, HANG_GUARD_MS);
});
