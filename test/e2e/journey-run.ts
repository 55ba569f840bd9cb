import { Redis } from 'ioredis';
import { deleteUsersNamed } from '../../services/auth/test/support/keycloak.js';
import { runJourney, type JourneyPlan, type JourneyRecord } from './journey.js';
import type { TestPlatform } from './test-platform.js';

/** A journey run against a test platform, and how to undo what it left in the shared stores. */
export interface JourneyRun {
  record: JourneyRecord;
  /** The graph registry's Redis database. */
  registryRedis: Redis;
  /** Removes the journey's graph (and `graphs`), puts the schema back as it was, deletes the Keycloak user. */
  cleanUp(graphs?: readonly string[]): Promise<void>;
}

/**
 * Runs the journey of `plan` (its graph pointing at the platform's gateway fixture) against the
 * platform. The shared Redis and Keycloak keep what a journey writes, so the run remembers the
 * stored schema first; when the run itself throws, it cleans up before rethrowing.
 */
export async function runJourneyOn(platform: TestPlatform, plan: JourneyPlan): Promise<JourneyRun> {
  const registryRedis = new Redis(platform.registryStoreUrl);
  const schemaBefore = await registryRedis.get('graph:schema');
  plan.graph.url = platform.gateway.url;
  const cleanUp = async (graphs: readonly string[] = []): Promise<void> => {
    await registryRedis.del(`graph:${plan.graph.name}`, ...graphs.map((name) => `graph:${name}`));
    if (schemaBefore === null) await registryRedis.del('graph:schema');
    else await registryRedis.set('graph:schema', schemaBefore);
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
