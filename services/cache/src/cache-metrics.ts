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
  /** Limits of the gRPC transport that acted, by limit (@sp/grpc-server's LimitName). */
  transportLimits: Counter<'limit'>;
  storeEvents: StoreEvents;
}

/** What the gauges read when scraped: the store's entries (memory backend) and the open Subscribe streams. */
export interface CacheGaugeSources {
  items: () => number | undefined;
  subscriptions: () => number;
  /** Bytes the gRPC transport holds for calls. */
  transportBytes: () => number;
}

/** Cache counters, RPC latency, and gauges read from `sources` when scraped. */
export function createCacheMetrics(registry: Registry, sources: CacheGaugeSources): CacheMetrics {
  const registers = [registry];
  const evictions = new Counter({ name: 'cache_evictions_total', help: 'Entries evicted to stay within capacity (memory backend)', registers });
  const expirations = new Counter({ name: 'cache_expirations_total', help: 'Entries found expired (memory backend)', registers });
  const rejections = new Counter({ name: 'cache_rejections_total', help: 'New keys refused by a full partition with the reject policy (memory backend)', registers });
  new Gauge({
    name: 'cache_items',
    help: 'Entries currently held (memory backend)',
    registers,
    collect() {
      const items = sources.items();
      if (items !== undefined) this.set(items);
    },
  });
  new Gauge({
    name: 'cache_subscriptions',
    help: 'Subscribe streams (invalidations for near caches) open on this replica',
    registers,
    collect() {
      this.set(sources.subscriptions());
    },
  });
  new Gauge({
    name: 'grpc_server_buffered_bytes',
    help: 'Bytes the gRPC transport holds for calls: request headers and messages, answers not yet sent (bounded by Grpc__ProcessBufferBytes)',
    registers,
    collect() {
      this.set(sources.transportBytes());
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
    transportLimits: new Counter({
      name: 'grpc_server_limit_events_total',
      help: 'Times a limit of the gRPC transport acted (a connection refused or closed, a stream refused or reset, a message or answer refused), by limit',
      labelNames: ['limit'],
      registers,
    }),
    storeEvents: { evicted: (n) => evictions.inc(n), expired: (n) => expirations.inc(n), rejected: (n) => rejections.inc(n) },
  };
}
