import { Registry, collectDefaultMetrics } from 'prom-client';

export type { Registry } from 'prom-client';

/** A registry per service with Node's default process metrics; services add their own. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}
