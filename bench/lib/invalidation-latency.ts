// Invalidation latency for the cache benchmark: from the start of a Set through one replica to
// its announcement on every Subscribe stream, whichever replica each stream is on.
import { credentials, type ClientReadableStream } from '@grpc/grpc-js';
import { cacheServiceClient, createCacheClient, type Invalidation__Output } from '@sp/cache-client';
import { percentile } from './stats.ts';

export interface LatencyFigures {
  streams: number;
  writes: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Announcements that never came (should be 0). */
  missed: number;
}

const PREFIX = 'latency:';

/** A stream that has said SUBSCRIBED (a Redis-backed replica refuses until its notifications flow). */
async function subscribed(address: string, onKey: (key: string) => void): Promise<{ stream: ClientReadableStream<Invalidation__Output>; close(): void }> {
  const Client = cacheServiceClient();
  const client = new Client(address, credentials.createInsecure());
  for (;;) {
    const stream = client.Subscribe({ prefixes: [PREFIX] });
    const ok = await new Promise<boolean>((resolve) => {
      stream.once('data', () => resolve(true));
      stream.once('error', () => resolve(false));
    });
    if (ok) {
      stream.on('data', (message: Invalidation__Output) => {
        if (message.kind === 'WRITTEN') onKey(message.key);
      });
      stream.on('error', () => undefined); // the cancel at the end
      return {
        stream,
        close() {
          stream.cancel();
          client.close();
        },
      };
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * `writes` sets of fresh keys, a few milliseconds apart, through the `writers` addresses in turn,
 * with a stream open on each of `subscribers`; every stream's delay for every write counts.
 */
export async function invalidationLatency(subscribers: readonly string[], writers: readonly string[], writes: number): Promise<LatencyFigures> {
  const startedAt = new Map<string, number>();
  const latencies: number[] = [];
  const streams = await Promise.all(subscribers.map((address) => subscribed(address, (key) => latencies.push(performance.now() - startedAt.get(key)!))));
  const clients = writers.map((address) => createCacheClient<string>({ address, coalesce: false }));
  for (let i = 0; i < writes; i++) {
    const key = `${PREFIX}${Date.now()}-${i}`;
    startedAt.set(key, performance.now());
    await clients[i % clients.length]!.set(key, 'x', 60_000);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  streams.forEach((stream) => stream.close());
  clients.forEach((client) => client.close());
  const sorted = Float64Array.from(latencies).sort();
  return {
    streams: streams.length,
    writes,
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    maxMs: percentile(sorted, 100),
    missed: writes * streams.length - latencies.length,
  };
}
