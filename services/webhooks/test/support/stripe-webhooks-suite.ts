import { afterAll, beforeAll } from '@jest/globals';
import { stripeMockFixtures } from './stripe-events.js';
import { startDependencies, startWebhooks, type Dependencies, type InstanceOptions, type WebhooksInstance } from './webhooks-env.js';

export type StripeMockFixtures = Awaited<ReturnType<typeof stripeMockFixtures>>;

export interface StripeWebhooksSuite {
  deps: Dependencies;
  service: WebhooksInstance;
  /** The objects stripe-mock answers with, which events must reference to be applied. */
  mock: StripeMockFixtures;
}

/**
 * Starts, for the test file calling it, the dependencies and one webhooks service and reads
 * stripe-mock's fixtures before its tests; closes both after them. `use` receives what started;
 * `options` configure the service instance.
 */
export function useStripeWebhooksSuite(use: (suite: StripeWebhooksSuite) => void, options: InstanceOptions = {}): void {
  let started: Partial<StripeWebhooksSuite> = {};
  beforeAll(async () => {
    const deps = await startDependencies();
    started = { deps };
    started.service = await startWebhooks(deps, options);
    started.mock = await stripeMockFixtures();
    use(started as StripeWebhooksSuite);
  });
  afterAll(async () => {
    await started.service?.close();
    await started.deps?.close();
  });
}
