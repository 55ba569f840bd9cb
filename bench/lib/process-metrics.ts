// A Node service's own process figures from its /metrics (prom-client's default metrics), for the
// benchmarks that watch a service under attack (grpc-attacks.bench.ts, grpc-attack-profile.ts).

/** The figures by metric name; a metric the service does not export is missing. */
export interface ProcessMetrics {
  /** The longest event-loop delay since the previous scrape (prom-client resets it on each). */
  nodejs_eventloop_lag_max_seconds?: number;
  nodejs_heap_size_used_bytes?: number;
  nodejs_heap_size_total_bytes?: number;
  nodejs_external_memory_bytes?: number;
}

const PROCESS_METRICS = /^(nodejs_eventloop_lag_max_seconds|nodejs_heap_size_used_bytes|nodejs_heap_size_total_bytes|nodejs_external_memory_bytes)(?:\{[^}]*\})? (\S+)$/gm;

/** One scrape of the management port `port` on loopback. */
export async function processMetrics(port: number): Promise<ProcessMetrics> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const figures: Record<string, number> = {};
  for (const match of text.matchAll(PROCESS_METRICS)) figures[match[1]!] = Number(match[2]);
  return figures;
}
