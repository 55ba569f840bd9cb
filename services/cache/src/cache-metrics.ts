import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { StoreEvents } from './store.js';

export interface CacheMetrics {
  hits: Counter;
  misses: Counter;
  sets: Counter;
  removals: Counter;
  increments: Counter;
  setIfAbsent: Counter<'result'>;
  rpcDuration: Histogram<'method' | 'code'>;
  storeEvents: StoreEvents;
}

/** Cache counters and RPC latency; `items` reads the store's size when scraped. */
export function createCacheMetrics(registry: Registry, size: () => number | undefined): CacheMetrics {
  const registers = [registry];
  const evictions = new Counter({ name: 'cache_evictions_total', help: 'Entries evicted to stay within capacity (memory backend)', registers });
  const expirations = new Counter({ name: 'cache_expirations_total', help: 'Entries found expired (memory backend)', registers });
  const rejections = new Counter({ name: 'cache_rejections_total', help: 'New keys refused by a full partition with the reject policy (memory backend)', registers });
  new Gauge({
    name: 'cache_items',
    help: 'Entries currently held (memory backend)',
    registers,
    collect() {
      const items = size();
      if (items !== undefined) this.set(items);
    },
  });
  return {
    hits: new Counter({ name: 'cache_hits_total', help: 'Get calls that found a live entry', registers }),
    misses: new Counter({ name: 'cache_misses_total', help: 'Get calls that found nothing', registers }),
    sets: new Counter({ name: 'cache_sets_total', help: 'Entries stored', registers }),
    removals: new Counter({ name: 'cache_removals_total', help: 'Entries removed by Remove or RemoveIfEquals', registers }),
    increments: new Counter({ name: 'cache_increments_total', help: 'Counters changed by Increment', registers }),
    setIfAbsent: new Counter({ name: 'cache_set_if_absent_total', help: 'SetIfAbsent calls by result: stored, or found a live entry', labelNames: ['result'], registers }),
    rpcDuration: new Histogram({
      name: 'grpc_server_handling_seconds',
      help: 'RPC handling time by method and status code',
      labelNames: ['method', 'code'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5, 1],
      registers,
    }),
    storeEvents: { evicted: (n) => evictions.inc(n), expired: (n) => expirations.inc(n), rejected: (n) => rejections.inc(n) },
  };
}
