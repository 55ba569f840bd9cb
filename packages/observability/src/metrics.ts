import { Counter, Registry, collectDefaultMetrics } from 'prom-client';

export type { Registry } from 'prom-client';

/** A registry per service with Node's default process metrics; services add their own. */
export function createRegistry(service: string): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  return registry;
}

export interface CounterFromZeroOptions<L extends string> {
  name: string;
  help: string;
  /** Each label's known values; every combination starts at 0. */
  labels: { readonly [K in L]: readonly string[] };
}

/**
 * A counter in `registry` whose every combination of the known label values exists at 0 from the
 * start: Prometheus' increase() and rate() see the first event (they need a sample before it), an
 * alert on it can fire, and panels show 0 rather than "No data".
 */
export function counterFromZero<L extends string>(registry: Registry, options: CounterFromZeroOptions<L>): Counter<L> {
  const labelNames = Object.keys(options.labels) as L[];
  const counter = new Counter<L>({ name: options.name, help: options.help, labelNames, registers: [registry] });
  const combinations = labelNames.reduce<Array<Partial<Record<L, string>>>>(
    (partial, label) => partial.flatMap((labels) => options.labels[label].map((value) => ({ ...labels, [label]: value }))),
    [{}],
  );
  for (const labels of combinations) counter.inc(labels, 0);
  return counter;
}
