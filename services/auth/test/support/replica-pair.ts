import { randomUUID } from 'node:crypto';
import { infra } from '../../../../test/support/infra.js';
import { startCacheService, type RunningCacheService } from '../../../../test/support/cache-service.js';
import { collectEvents, type EventCollector } from '../../../../test/support/kafka.js';
import { startAuth, type RunningAuth } from './auth-fixture.js';
import { startAll } from '../../../../test/support/start-all.js';

export interface ReplicaPair {
  /** Two cache replicas on the shared Redis, under a key prefix of the test's own. */
  caches: RunningCacheService[];
  /** Auth replica A on the first cache replica, B on the second. */
  a: RunningAuth;
  b: RunningAuth;
  /** The SMS events (`notifications`), for OTP logins. */
  events: EventCollector;
  close(): Promise<void>;
}

/** Two auth replicas as deployed with several replicas: each on its own cache replica of one Redis. */
export async function startReplicaPair(name: string, settings: Record<string, string>): Promise<ReplicaPair> {
  const keyPrefix = `${name}-${randomUUID()}:`;
  const events = await collectEvents(['notifications']);
  const caches: RunningCacheService[] = [];
  for (let i = 0; i < 2; i++) caches.push(await startCacheService({ redisUrl: infra('REDIS_URL'), keyPrefix }));
  const [a, b] = await startAll<[RunningAuth, RunningAuth]>([
    [startAuth(caches[0]!.address, settings), (started) => started.close()],
    [startAuth(caches[1]!.address, settings), (started) => started.close()],
  ]);
  return {
    caches,
    a,
    b,
    events,
    close: async () => {
      await a.close();
      await b.close();
      await events.close();
      for (const cache of caches) await cache.close();
    },
  };
}
