// Invalidation latency for the cache benchmark: from the start of a Set through one replica to
// its announcement on every Subscribe stream, whichever replica each stream is on. To tell the
// service's share of the delay from the machine's, the same writes are timed at two references
// in this process: the Set's own round trip, and (Redis backend) Redis' keyspace notification
// read directly by a plain ioredis subscriber, with no cache service on its path. A stream's
// delay minus the direct notification's for the same write is what the service added.
import { credentials, type ClientReadableStream } from '@grpc/grpc-js';
import { Redis } from 'ioredis';
import { cacheServiceClient, createCacheClient, type Invalidation__Output } from '@sp/cache-client';
import { percentile } from './stats.ts';

export interface Percentiles {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
}

export interface LatencyFigures extends Percentiles {
  streams: number;
  writes: number;
  /** Announcements that never came (should be 0). */
  missed: number;
  /** The Set call itself, from its start to its answer in this process. */
  setRoundTrip: Percentiles;
  /** Redis backend: from the Set's start to its keyspace notification read directly from Redis here. */
  redisDirect?: Percentiles;
  /** Redis backend: each stream's delay minus the direct notification's for the same write. */
  serviceAdded?: Percentiles;
}

export interface DirectNotifications {
  /** The Redis the replicas use, and their key prefix. */
  redisUrl: string;
  keyPrefix: string;
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

function percentiles(values: number[]): Percentiles {
  const sorted = Float64Array.from(values).sort();
  return { p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99), maxMs: percentile(sorted, 100) };
}

/** A plain subscriber of the keyspace notifications of the keys this benchmark writes. */
async function directSubscriber({ redisUrl, keyPrefix }: DirectNotifications, onKey: (key: string) => void): Promise<Redis> {
  const redis = new Redis(redisUrl);
  redis.on('pmessage', (_pattern: string, channel: string, event: string) => {
    if (event === 'set') onKey(channel.slice(channel.indexOf('__:') + 3 + keyPrefix.length));
  });
  await redis.psubscribe(`__keyspace@*__:${keyPrefix}${PREFIX}*`);
  return redis;
}

/**
 * `writes` sets of fresh keys, a few milliseconds apart, through the `writers` addresses in turn,
 * with a stream open on each of `subscribers`; every stream's delay for every write counts. With
 * `direct`, the notifications are also read straight from Redis for reference.
 */
export async function invalidationLatency(subscribers: readonly string[], writers: readonly string[], writes: number, direct?: DirectNotifications): Promise<LatencyFigures> {
  const startedAt = new Map<string, number>();
  const directAt = new Map<string, number>();
  const latencies: number[] = [];
  const streamArrivals: Array<{ key: string; at: number }> = [];
  const roundTrips: number[] = [];
  const onStream = (key: string): void => {
    const at = performance.now();
    latencies.push(at - startedAt.get(key)!);
    streamArrivals.push({ key, at });
  };
  const streams = await Promise.all(subscribers.map((address) => subscribed(address, onStream)));
  const redis = direct === undefined ? undefined : await directSubscriber(direct, (key) => directAt.set(key, performance.now()));
  const clients = writers.map((address) => createCacheClient<string>({ address, coalesce: false }));
  for (let i = 0; i < writes; i++) {
    const key = `${PREFIX}${Date.now()}-${i}`;
    const started = performance.now();
    startedAt.set(key, started);
    await clients[i % clients.length]!.set(key, 'x', 60_000);
    roundTrips.push(performance.now() - started);
    await new Promise((resolve) => setTimeout(resolve, 3));
  }
  await new Promise((resolve) => setTimeout(resolve, 500));
  streams.forEach((stream) => stream.close());
  clients.forEach((client) => client.close());
  redis?.disconnect();
  const figures: LatencyFigures = {
    streams: streams.length,
    writes,
    ...percentiles(latencies),
    missed: writes * streams.length - latencies.length,
    setRoundTrip: percentiles(roundTrips),
  };
  if (redis !== undefined) {
    figures.redisDirect = percentiles([...directAt].map(([key, at]) => at - startedAt.get(key)!));
    const added = streamArrivals.filter(({ key }) => directAt.has(key)).map(({ key, at }) => at - directAt.get(key)!);
    figures.serviceAdded = percentiles(added);
  }
  return figures;
}
