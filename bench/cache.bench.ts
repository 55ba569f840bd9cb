// make bench: the cache service's Get and Set over loopback, one call per operation, against two
// peers on the same proto (a grpc-go server with an in-memory map, built by bench/lib/go-peer.sh,
// and a bare @grpc/grpc-js server answering a constant) and redis-benchmark at the same
// concurrency: requests/s, p99 and CPU µs per call of each server. Then the caller's side: the
// same gets coalesced into GetMany (the client's default) against sending one Get each, with the
// CPU each costs the caller and the service. The atomic Increment and SetIfAbsent next to Get on
// the same servers in the same rounds; the invalidation latency from a Set through one replica to
// the Subscribe streams of both; the memory backend's footprint with 1,000,000 entries of 100 bytes.
// Each server runs in its own process; the load comes from this one (the project's own load
// client: @grpc/grpc-js through @sp/cache-client). Results: bench/results/cache.json.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { invalidationLatency } from './lib/invalidation-latency.ts';
import { drive, freePort, infraEnv, median, rssBytes, startChild, stopChild, writeResults, type RunFigures } from './lib/stats.ts';

const CONCURRENCY = 32;
const DURATION_MS = 5000;
const ROUNDS = 3;
const KEYS = 1000;
const VALUE = Buffer.alloc(100, 'v');
const ENTRIES = 1_000_000;
const INVALIDATION_WRITES = 1000;
// V8 grows its heap lazily (up to ~4 GB on this machine), so an unbounded process keeps garbage
// that a sized one collects. Deployments bound the heap from the container's memory limit; these
// are the settings for a 512 MiB container (services/cache/README.md, "Memory sizing").
const FOOTPRINT_NODE_OPTIONS = ['--max-old-space-size=320', '--max-semi-space-size=8'];

const cacheMain = fileURLToPath(new URL('../services/cache/dist/main.js', import.meta.url));
const bareServer = fileURLToPath(new URL('./lib/bare-cache-server.ts', import.meta.url));

async function startCacheService(env: Record<string, string>, nodeOptions: string[] = []): Promise<{ address: string; stop: () => Promise<void>; pid: number }> {
  const port = await freePort();
  const child = await startChild(
    process.execPath,
    [...nodeOptions, cacheMain],
    { Cache__Port: String(port), Cache__Host: '127.0.0.1', Management__Port: String(await freePort()), ...env },
    /listening/,
  );
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child), pid: child.pid! };
}

/** A peer server: `command` listens on 127.0.0.1:$PORT and prints `listening`. */
async function startPeer(command: string, args: string[] = []): Promise<{ address: string; stop: () => Promise<void>; pid: number }> {
  const port = await freePort();
  const child = await startChild(command, args, { PORT: String(port) }, /listening/);
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child), pid: child.pid! };
}

/** The grpc-go peer, built (once, cached under .cache) by bench/lib/go-peer.sh. */
function buildGoPeer(): string {
  const script = fileURLToPath(new URL('./lib/go-peer.sh', import.meta.url));
  return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

interface Target {
  name: string;
  address: string;
  pid: number;
  stop: () => Promise<void>;
  /** The cache service itself (the peers answer Get and Set only). */
  service: boolean;
  runs: { get: RunFigures[]; set: RunFigures[]; getCoalesced: RunFigures[]; increment: RunFigures[]; setIfAbsent: RunFigures[] };
}

const newRuns = (): Target['runs'] => ({ get: [], set: [], getCoalesced: [], increment: [], setIfAbsent: [] });
const WINDOW_MS = 60_000;

async function round(target: Target, roundNo: number): Promise<void> {
  // One call per operation, as a peer comparison needs (and as the client did before coalescing).
  const client = createCacheClient<Buffer>({ address: target.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer);
  for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
  target.runs.get.push(await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, DURATION_MS, target.pid));
  target.runs.set.push(await drive((i) => client.set(`key-${i % KEYS}`, VALUE), CONCURRENCY, DURATION_MS, target.pid));
  if (target.service) {
    const coalescing = createCacheClient<Buffer>({ address: target.address, deadlineMs: 5000, retries: 0 }, bufferSerializer);
    target.runs.getCoalesced.push(await drive((i) => coalescing.get(`key-${i % KEYS}`), CONCURRENCY, DURATION_MS, target.pid));
    coalescing.close();
    // As the OTP limits use them: counters of a fixed window over many keys, and claims of fresh keys.
    target.runs.increment.push(await drive((i) => client.increment(`counter-${i % KEYS}`, 1, WINDOW_MS), CONCURRENCY, DURATION_MS, target.pid));
    target.runs.setIfAbsent.push(await drive((i) => client.setIfAbsent(`claim-${roundNo}-${i}`, VALUE, WINDOW_MS), CONCURRENCY, DURATION_MS, target.pid));
  }
  client.close();
}

function redisBenchmark(redisUrl: string): { get: Partial<RunFigures>; set: Partial<RunFigures> } {
  const url = new URL(redisUrl);
  const csv = execFileSync(infraEnv().REDIS_BENCHMARK_BIN ?? 'redis-benchmark', ['-h', url.hostname, '-p', url.port, '-c', String(CONCURRENCY), '-n', '300000', '-d', '100', '-t', 'get,set', '--csv'], { encoding: 'utf8' });
  const rows = csv.trim().split('\n').slice(1).map((line) => line.split(',').map((cell) => cell.replaceAll('"', '')));
  const figures = (test: string): Partial<RunFigures> => {
    const row = rows.find((cells) => cells[0] === test)!;
    return { opsPerSecond: Math.round(Number(row[1])), p50Ms: Number(row[4]), p99Ms: Number(row[6]) };
  };
  return { get: figures('GET'), set: figures('SET') };
}

async function memoryFootprint(): Promise<Record<string, number>> {
  const service = await startCacheService({ Cache__Backend: 'memory', Cache__Capacity: String(ENTRIES) }, FOOTPRINT_NODE_OPTIONS);
  const clients = [0, 1].map(() => createCacheClient<Buffer>({ address: service.address, deadlineMs: 10_000 }, bufferSerializer));
  const client = clients[0]!;
  await client.get('warm-up');
  const before = rssBytes(service.pid);
  let next = 0;
  const worker = async (k: number): Promise<void> => {
    while (next < ENTRIES) {
      const i = next++;
      await clients[k % 2]!.set(`entry-${i.toString().padStart(7, '0')}`, Buffer.alloc(100, i % 256));
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: 128 }, (_, k) => worker(k)));
  const fillSeconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const after = rssBytes(service.pid);
  const stillThere = await client.get('entry-0000000');
  clients.forEach((c) => c.close());
  await service.stop();
  if (stillThere?.length !== 100) throw new Error('the first entry was evicted: capacity not honoured');
  return { entries: ENTRIES, valueBytes: 100, rssBeforeBytes: before, rssAfterBytes: after, rssAfterMiB: Math.round(after / 2 ** 20), bytesPerEntry: Math.round((after - before) / ENTRIES), fillSeconds: Number(fillSeconds.toFixed(1)) };
}


const ratio = (a: number, b: number): number => Number((a / b).toFixed(3));

// All four servers run for the whole measurement, loaded one at a time in interleaved rounds,
// so a disturbance of the shared machine hits every target alike; each figure is the median round.
const redisUrl = infraEnv().REDIS_URL!;
const goPeer = buildGoPeer();
const targets: Target[] = [
  { name: 'grpcGoServer', ...(await startPeer(goPeer)), service: false, runs: newRuns() },
  { name: 'bareGrpcServer', ...(await startPeer(process.execPath, [bareServer])), service: false, runs: newRuns() },
  { name: 'memoryBackend', ...(await startCacheService({ Cache__Backend: 'memory' })), service: true, runs: newRuns() },
  { name: 'redisBackend', ...(await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: 'bench:' })), service: true, runs: newRuns() },
];
for (let r = 0; r < ROUNDS; r++) for (const target of targets) await round(target, r);
for (const target of targets) await target.stop();
const figures = Object.fromEntries(
  targets.map((t) => [
    t.name,
    t.service
      ? { get: median(t.runs.get), set: median(t.runs.set), getCoalesced: median(t.runs.getCoalesced), increment: median(t.runs.increment), setIfAbsent: median(t.runs.setIfAbsent) }
      : { get: median(t.runs.get), set: median(t.runs.set) },
  ]),
);
const [go, bare, memory, redis] = targets.map((t) => figures[t.name]!);

// Invalidations: two replicas on the test Redis, a stream on each, Sets through both in turn; and
// the memory backend (one replica announcing its own writes).
const replicas = [
  await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: 'bench-inv:' }),
  await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: 'bench-inv:' }),
];
const redisInvalidation = await invalidationLatency(
  replicas.map((replica) => replica.address),
  replicas.map((replica) => replica.address),
  INVALIDATION_WRITES,
);
for (const replica of replicas) await replica.stop();
const single = await startCacheService({ Cache__Backend: 'memory' });
const memoryInvalidation = await invalidationLatency([single.address, single.address], [single.address], INVALIDATION_WRITES);
await single.stop();

const redisBench = redisBenchmark(redisUrl);
const footprint = await memoryFootprint();

const ratios = {
  // The peer comparison, one call per Get: throughput, and the CPU each server spends per call.
  memoryGetCpuVsGrpcGo: ratio(memory!.get.serverCpuMicrosPerOp!, go!.get.serverCpuMicrosPerOp!),
  redisGetCpuVsGrpcGo: ratio(redis!.get.serverCpuMicrosPerOp!, go!.get.serverCpuMicrosPerOp!),
  bareGetCpuVsGrpcGo: ratio(bare!.get.serverCpuMicrosPerOp!, go!.get.serverCpuMicrosPerOp!),
  memoryGetVsGrpcGo: ratio(memory!.get.opsPerSecond, go!.get.opsPerSecond),
  bareGetVsGrpcGo: ratio(bare!.get.opsPerSecond, go!.get.opsPerSecond),
  memoryGetVsBare: ratio(memory!.get.opsPerSecond, bare!.get.opsPerSecond),
  memorySetVsBare: ratio(memory!.set.opsPerSecond, bare!.set.opsPerSecond),
  redisGetVsBare: ratio(redis!.get.opsPerSecond, bare!.get.opsPerSecond),
  redisSetVsBare: ratio(redis!.set.opsPerSecond, bare!.set.opsPerSecond),
  // Throughput a server could reach if it alone were the bottleneck: bare CPU per op / its CPU per op.
  memoryGetVsBareByServerCpu: ratio(bare!.get.serverCpuMicrosPerOp!, memory!.get.serverCpuMicrosPerOp!),
  memorySetVsBareByServerCpu: ratio(bare!.set.serverCpuMicrosPerOp!, memory!.set.serverCpuMicrosPerOp!),
  redisGetVsBareByServerCpu: ratio(bare!.get.serverCpuMicrosPerOp!, redis!.get.serverCpuMicrosPerOp!),
  redisSetVsBareByServerCpu: ratio(bare!.set.serverCpuMicrosPerOp!, redis!.set.serverCpuMicrosPerOp!),
  // Coalesced gets (the client's default) against one Get each: CPU per get in the caller and the service.
  memoryCallerCpuCoalescedVsPerCall: ratio(memory!.getCoalesced!.clientCpuMicrosPerOp!, memory!.get.clientCpuMicrosPerOp!),
  redisCallerCpuCoalescedVsPerCall: ratio(redis!.getCoalesced!.clientCpuMicrosPerOp!, redis!.get.clientCpuMicrosPerOp!),
  memoryServiceCpuCoalescedVsGrpcGo: ratio(memory!.getCoalesced!.serverCpuMicrosPerOp!, go!.get.serverCpuMicrosPerOp!),
  memoryGetCoalescedVsPerCall: ratio(memory!.getCoalesced!.opsPerSecond, memory!.get.opsPerSecond),
  // The atomic operations against Get on the same server, same run.
  memoryIncrementVsGet: ratio(memory!.increment!.opsPerSecond, memory!.get.opsPerSecond),
  memorySetIfAbsentVsGet: ratio(memory!.setIfAbsent!.opsPerSecond, memory!.get.opsPerSecond),
  redisIncrementVsGet: ratio(redis!.increment!.opsPerSecond, redis!.get.opsPerSecond),
  redisSetIfAbsentVsGet: ratio(redis!.setIfAbsent!.opsPerSecond, redis!.get.opsPerSecond),
};

process.stdout.write(
  [
    'cache Get, one call each (median round): requests/s, p99 ms, server CPU µs/call',
    ...(['grpcGoServer', 'bareGrpcServer', 'memoryBackend', 'redisBackend'] as const).map((name) => {
      const get = figures[name]!.get;
      return `  ${name.padEnd(15)} ${String(get.opsPerSecond).padStart(7)}/s  p99 ${get.p99Ms} ms  ${get.serverCpuMicrosPerOp} µs`;
    }),
    `  memory backend vs grpc-go: CPU per call ${ratios.memoryGetCpuVsGrpcGo}× (target ≤ 2), requests/s ${ratios.memoryGetVsGrpcGo}×; bare grpc-js vs grpc-go: CPU ${ratios.bareGetCpuVsGrpcGo}×`,
    `caller CPU per get, coalesced vs one call each: memory ${memory!.getCoalesced!.clientCpuMicrosPerOp} vs ${memory!.get.clientCpuMicrosPerOp} µs (${ratios.memoryCallerCpuCoalescedVsPerCall}×, target ≤ 0.5), redis ${redis!.getCoalesced!.clientCpuMicrosPerOp} vs ${redis!.get.clientCpuMicrosPerOp} µs (${ratios.redisCallerCpuCoalescedVsPerCall}×); service CPU per coalesced get ${memory!.getCoalesced!.serverCpuMicrosPerOp} µs (${ratios.memoryServiceCpuCoalescedVsGrpcGo}× grpc-go's per call)`,
    `invalidation latency p99: redis (2 replicas, 2 streams) ${redisInvalidation.p99Ms} ms, memory ${memoryInvalidation.p99Ms} ms (target ≤ 50), missed ${redisInvalidation.missed + memoryInvalidation.missed}`,
    '',
  ].join('\n'),
);

writeResults('cache', {
  date: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  setup: {
    concurrency: CONCURRENCY,
    durationMsPerRun: DURATION_MS,
    rounds: ROUNDS,
    valueBytes: VALUE.length,
    keys: KEYS,
    loadGenerator: 'this process, @sp/cache-client on one @grpc/grpc-js channel per run (coalesce off: one call per operation; getCoalesced: the default); each server in its own process; figures are the median of interleaved rounds',
    grpcGoServer: 'bench/go/cache-peer (grpc-go, in-memory map), built by bench/lib/go-peer.sh',
    footprintNodeOptions: FOOTPRINT_NODE_OPTIONS.join(' '),
  },
  ...figures,
  invalidationLatency: { redis: redisInvalidation, memory: memoryInvalidation },
  redisBenchmark: redisBench,
  ratios,
  targets: { memoryGetCpuVsGrpcGo: 2, callerCpuCoalescedVsPerCall: 0.5, invalidationP99Ms: 50, memoryVsBare: 0.9, redisVsBare: 0.7, memoryFootprintMaxMiB: 400 },
  memoryFootprint: footprint,
});
