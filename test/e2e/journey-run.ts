import { Redis } from 'ioredis';
import { deleteUsersNamed } from '../../services/auth/test/support/keycloak.js';
import { runJourney, type JourneyPlan, type JourneyRecord } from './journey.js';
import type { TestPlatform } from './test-platform.js';

/** A journey run against a test platform, and how to undo what it left in the shared stores. */
export interface JourneyRun {
  record: JourneyRecord;
  /** The graph registry's Redis (the platform's own: it stops with the platform). */
  registryRedis: Redis;
  /** Deletes the journey's Keycloak user and lets go of the registry's Redis; safe after the platform stopped. */
  cleanUp(): Promise<void>;
}

/**
 * Runs the journey of `plan` (its graph pointing at the platform's gateway) against the
 * platform. The shared Keycloak keeps the user a journey creates; the registry's records go with
 * the platform's own redis-server. When the run itself throws, it cleans up before rethrowing.
 */
export async function runJourneyOn(platform: TestPlatform, plan: JourneyPlan): Promise<JourneyRun> {
  // No offline queue and no reconnects: once the platform stopped its redis-server, a command fails at once rather than waiting for it.
  const registryRedis = new Redis(platform.registryStoreUrl, { lazyConnect: true, enableOfflineQueue: false, maxRetriesPerRequest: 0, retryStrategy: () => null });
  await registryRedis.connect();
  plan.graph.url = platform.gateway.url;
  const cleanUp = async (): Promise<void> => {
    registryRedis.disconnect();
    await deleteUsersNamed([plan.phoneNumber]).catch(() => undefined);
  };
  try {
    return { record: await runJourney(platform.targets, plan), registryRedis, cleanUp };
  } catch (err) {
    await cleanUp();
    throw err;
  }
}
