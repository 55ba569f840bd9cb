import { afterAll, beforeAll } from '@jest/globals';
import { startDependencies, startWebhooks, type Dependencies, type WebhooksInstance } from './webhooks-env.js';

export interface ReplicasSuite {
  deps: Dependencies;
  /** Two instances sharing the store, the cache service and the broker: a delivery may reach either. */
  replicas: [WebhooksInstance, WebhooksInstance];
}

/** Starts, for the test file calling it, the dependencies and two webhooks replicas before its tests; closes them after. */
export function useTwoReplicas(use: (suite: ReplicasSuite) => void): void {
  let started: Partial<ReplicasSuite> = {};
  beforeAll(async () => {
    const deps = await startDependencies();
    started = { deps };
    started.replicas = [await startWebhooks(deps), await startWebhooks(deps)];
    use(started as ReplicasSuite);
  });
  afterAll(async () => {
    await Promise.all((started.replicas ?? []).map((replica) => replica.close()));
    await started.deps?.close();
  });
}
