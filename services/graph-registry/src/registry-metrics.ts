import { Gauge, type Registry } from 'prom-client';
import type { GraphStore } from './graph-store.js';

/**
 * Gauges read from the store when scraped, so they hold what every replica wrote. While the
 * store is unreachable a scrape keeps the last value rather than failing /metrics, which must
 * keep answering during an outage.
 */
export function registerGraphMetrics(registry: Registry, store: GraphStore): void {
  const registers = [registry];
  new Gauge({
    name: 'graph_registry_graphs',
    help: 'Graphs registered in the store',
    registers,
    async collect() {
      const graphs = await store.countGraphs().catch(() => undefined);
      if (graphs !== undefined) this.set(graphs);
    },
  });
  new Gauge({
    name: 'graph_registry_schema_bytes',
    help: 'Size of the stored GraphQL schema in bytes (0 when none)',
    registers,
    async collect() {
      const bytes = await store.schemaBytes().catch(() => undefined);
      if (bytes !== undefined) this.set(bytes);
    },
  });
}
