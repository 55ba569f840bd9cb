import { Counter, Histogram, type Registry } from 'prom-client';

type LabelName = 'method' | 'route' | 'status';

const LABEL_NAMES: LabelName[] = ['method', 'route', 'status'];
/** Upper bounds of http_request_duration_seconds, in seconds. */
export const REQUEST_DURATION_BUCKETS: readonly number[] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Records a handled request: its method, route template, status and duration in seconds. */
export type RecordRequest = (method: string, route: string, status: number, seconds: number) => void;

interface Series {
  labels: Record<LabelName, string>;
  count: number;
  duration: Histogram.Internal<LabelName>;
}

/**
 * The RED metrics of an HTTP service: http_requests_total and http_request_duration_seconds by
 * method, route template and status, through prom-client's documented API only. A request observes
 * its duration on the histogram child of its label set (kept per route → status → method, found
 * without building a key string) and counts itself in a plain record; the counter is filled from
 * those records by its documented `collect()` hook when /metrics is scraped, so prom-client's label
 * hashing runs once per request, not twice.
 */
export function createRequestMetrics(registry: Registry): RecordRequest {
  const byRoute = new Map<string, Map<number, Map<string, Series>>>();
  function* allSeries(): Iterable<Series> {
    for (const byStatus of byRoute.values()) for (const byMethod of byStatus.values()) yield* byMethod.values();
  }
  new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests handled',
    labelNames: LABEL_NAMES,
    registers: [registry],
    collect() {
      this.reset();
      for (const { labels, count } of allSeries()) this.inc(labels, count);
    },
  });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration',
    labelNames: LABEL_NAMES,
    buckets: [...REQUEST_DURATION_BUCKETS],
    registers: [registry],
  });

  const seriesOf = (method: string, route: string, status: number): Series => {
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map<number, Map<string, Series>>()));
    let byMethod = byStatus.get(status);
    if (byMethod === undefined) byStatus.set(status, (byMethod = new Map<string, Series>()));
    let entry = byMethod.get(method);
    if (entry === undefined) {
      const labels = { method, route, status: String(status) };
      entry = { labels, count: 0, duration: duration.labels(labels) };
      byMethod.set(method, entry);
    }
    return entry;
  };

  return (method, route, status, seconds) => {
    const entry = seriesOf(method, route, status);
    entry.count += 1;
    entry.duration.observe(seconds);
  };
}
