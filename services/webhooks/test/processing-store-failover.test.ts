import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseRedisUrl } from '@sp/core';
import { connectRedis } from '@sp/storage';
import { createRedisProcessingStore } from '../src/events/redis-processing-store.js';
import type { ProcessingStore } from '../src/events/processing-store.js';
import { eventually } from '../../../test/support/eventually.js';
import { failoverUnderTraffic } from '../../../test/support/failover-traffic.js';
import { startRedisCluster, type RedisClusterSet } from '../../../test/support/redis-cluster.js';
import { startRedisSentinel } from '../../../test/support/redis-sentinel.js';
import { silentLogger } from '../../../test/support/silent-logger.js';
import { HANG_GUARD_MS } from '../../../test/support/progress.js';

const PREFIX = 'failover:';
const EVENTS = Array.from({ length: 30 }, (_, i) => `evt_before_${i}`);
const doneKey = (eventId: string): string => `${PREFIX}{${eventId}}:done`;

describe.each([
  ['a Redis Cluster (3 primaries + 3 replicas)', startRedisCluster],
  ['Sentinel (1 primary, 2 replicas, 3 sentinels)', startRedisSentinel],
])('the Redis processing store on %s whose primary is killed', (_name, startSet) => {
  let set: RedisClusterSet;
  let store: ProcessingStore;

  beforeAll(async () => {
    set = await startSet();
    store = createRedisProcessingStore(connectRedis(parseRedisUrl(set.url)), silentLogger(), PREFIX);
    await eventually(() => store.check().then(() => true));
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await store.close();
    await set.stop();
  });

  it('should spread events over every primary, fail fast with 503 only during the failover, then still know every completed event without a restart', async () => {
    for (const eventId of EVENTS) {
      const claim = await store.claim(eventId, 5000);
      expect(claim.state).toBe('claimed');
      await store.complete(eventId, (claim as { token: string }).token, 60_000);
    }
    const holders = new Set(await Promise.all(EVENTS.map((eventId) => set.primaryPortOf(doneKey(eventId)))));
    expect([...holders].sort()).toEqual(await set.primaryPorts());

    const victim = await set.primaryPortOf(doneKey(EVENTS[0]!));
    // New events are claimed and completed while the primary dies, as retried deliveries would be.
    const { outcomes, killedAt, healthyAt } = await failoverUnderTraffic({
      call: async (n) => {
        const claim = await store.claim(`evt_during_${n}`, 5000);
        if (claim.state === 'claimed') await store.complete(`evt_during_${n}`, claim.token, 60_000);
      },
      kill: () => set.kill(victim),
      waitUntilHealthy: () => set.waitUntilHealthy(),
      recovered: () => store.claim(EVENTS[0]!, 5000).then((claim) => claim.state === 'done'),
      what: 'the completed event known after the failover',
    });

    for (const failure of outcomes.filter((outcome) => outcome.error !== undefined)) {
      expect(failure.error).toMatchObject({ status: 503, message: 'store is unavailable' });
      expect(failure.endedAt - failure.startedAt).toBeLessThan(1500);
      expect(failure.endedAt).toBeGreaterThanOrEqual(killedAt);
      expect(failure.startedAt).toBeLessThanOrEqual(healthyAt + 3000);
    }
    expect(outcomes.some((outcome) => outcome.error === undefined && outcome.startedAt > healthyAt)).toBe(true);
    // Completed well before the kill, so replicated: none of them would be processed again.
    for (const eventId of EVENTS) expect(await store.claim(eventId, 5000)).toEqual({ state: 'done' });
  }, 60_000);
});
