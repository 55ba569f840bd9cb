import { Gauge, type Registry } from 'prom-client';
import type { GraphStore } from '../graphs/graph-store.js';

/**
 * Gauges read from the store when scraped, so they hold what every replica wrote. While the
 * store is unreachable a scrape keeps the last value rather than failing /metrics, which must
 * keep answering during an outage.
 */
export function registerGraphMetrics(registry: Registry, store: GraphStore): void {
  const storeGauge = (name: string, help: string, read: () => Promise<number>): void => {
    new Gauge({
      name,
      help,
      registers: [registry],
      async collect() {
        const value = await read().catch(() => undefined);
        if (value !== undefined) this.set(value);
      },
    });
  };
  storeGauge('graph_registry_graphs', 'Graphs registered in the store', () => store.countGraphs());
  storeGauge('graph_registry_schema_bytes', 'Size of the stored GraphQL schema in bytes (0 when none)', () => store.schemaBytes());
}
