// make bench: the cache service's Get and Set over loopback, one call per operation, against two
// peers on the same proto (a grpc-go server with an in-memory map, built by bench/lib/go-peer.sh,
// and a bare @grpc/grpc-js server answering a constant) and redis-benchmark at the same
// concurrency: requests/s, p99 and CPU µs per call of each server. Then the caller's side: the
// same gets coalesced into GetMany (the client's default) against sending one Get each, with the
// CPU each costs the caller and the service. The atomic Increment and SetIfAbsent next to Get on
// the same servers in the same rounds; the invalidation latency from a Set through one replica to
// the Subscribe streams of both; the memory backend's footprint with 1,000,000 entries of 100 bytes.
// Each server runs in its own process; the load comes from this one (the project's own load
// client: @grpc/grpc-js through @sp/cache-client). The peer comparison of Get has rounds of its
// own, short and many, and reports the median of the ratios taken within each round (a ratio of
// two runs seconds apart survives the shared machine's load far better than either figure).
// Last, the memory backend and the bare server run once more under `node --cpu-prof` and the
// top frames of their profiles are printed. Results: bench/results/cache.json.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { summarizeProfileDir, type ProfileSummary } from './lib/cpu-profile.ts';
import { invalidationLatency } from './lib/invalidation-latency.ts';
import { drive, freePort, infraEnv, median, medianOf, rssBytes, startChild, stopChild, writeResults, type RunFigures } from './lib/stats.ts';

const CONCURRENCY = 32;
const DURATION_MS = 5000;
const ROUNDS = 3;
// The peer comparison of Get: every target once per round, in a rotating order.
const GET_ROUNDS = 9;
const GET_DURATION_MS = 3000;
const GET_WARMUP_MS = 1000;
const PROFILE_DURATION_MS = 8000;
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

const load = (): number => Number(loadavg()[0]!.toFixed(2));

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

/** One round of the Get comparison: each target's figures by its name. */
type GetRound = Record<string, RunFigures>;

/**
 * Get, one call each, on every target in each round (the order rotates, so none is always first
 * after a pause); the targets' keys are filled first. Answers each round's figures by target and
 * the 1-minute load average when the round ended.
 */
async function getRounds(targets: Target[]): Promise<{ rounds: GetRound[]; loadAverages: number[] }> {
  const clients = targets.map((target) => createCacheClient<Buffer>({ address: target.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer));
  for (const client of clients) for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
  const rounds: GetRound[] = [];
  const loadAverages: number[] = [];
  for (let r = 0; r < GET_ROUNDS; r++) {
    const figures: GetRound = {};
    for (let k = 0; k < targets.length; k++) {
      const index = (r + k) % targets.length;
      const client = clients[index]!;
      figures[targets[index]!.name] = await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, GET_DURATION_MS, targets[index]!.pid, GET_WARMUP_MS);
    }
    rounds.push(figures);
    loadAverages.push(load());
  }
  clients.forEach((client) => client.close());
  return { rounds, loadAverages };
}

/** The median, lowest and highest over the rounds of `a`'s figure divided by `b`'s in the same round. */
function roundRatios(rounds: GetRound[], a: string, b: string, figure: (run: RunFigures) => number): { median: number; min: number; max: number } {
  const ratios = rounds.map((round) => figure(round[a]!) / figure(round[b]!));
  return { median: ratio(medianOf(ratios), 1), min: ratio(Math.min(...ratios), 1), max: ratio(Math.max(...ratios), 1) };
}

/**
 * A server started by `start` under `node --cpu-prof`, loaded with Gets for a while, stopped: the
 * top frames of the load alone (what it sampled before the warm-up ended is left out).
 */
async function profileGets(start: (nodeOptions: string[]) => Promise<{ address: string; stop: () => Promise<void>; pid: number }>): Promise<ProfileSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'cache-bench-profile-'));
  try {
    const spawned = performance.now();
    const server = await start(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const client = createCacheClient<Buffer>({ address: server.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer);
    for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
    const loadedAfterMs = performance.now() - spawned + GET_WARMUP_MS;
    await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, PROFILE_DURATION_MS, server.pid, GET_WARMUP_MS);
    client.close();
    await server.stop();
    return summarizeProfileDir(dir, 15, loadedAfterMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

// All four servers run for the whole measurement, loaded one at a time in interleaved rounds,
// so a disturbance of the shared machine hits every target alike; each figure is the median round.
const loadAtStart = load();
const redisUrl = infraEnv().REDIS_URL!;
const goPeer = buildGoPeer();
const targets: Target[] = [
  { name: 'grpcGoServer', ...(await startPeer(goPeer)), service: false, runs: newRuns() },
  { name: 'bareGrpcServer', ...(await startPeer(process.execPath, [bareServer])), service: false, runs: newRuns() },
  { name: 'memoryBackend', ...(await startCacheService({ Cache__Backend: 'memory' })), service: true, runs: newRuns() },
  { name: 'redisBackend', ...(await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: 'bench:' })), service: true, runs: newRuns() },
];
const getComparison = await getRounds(targets);
for (let r = 0; r < ROUNDS; r++) for (const target of targets) await round(target, r);
for (const target of targets) await target.stop();
const serverCpu = (run: RunFigures): number => run.serverCpuMicrosPerOp!;
const requestsPerSecond = (run: RunFigures): number => run.opsPerSecond;
const getVsPeers = {
  memoryCpuVsGrpcGo: roundRatios(getComparison.rounds, 'memoryBackend', 'grpcGoServer', serverCpu),
  redisCpuVsGrpcGo: roundRatios(getComparison.rounds, 'redisBackend', 'grpcGoServer', serverCpu),
  bareCpuVsGrpcGo: roundRatios(getComparison.rounds, 'bareGrpcServer', 'grpcGoServer', serverCpu),
  memoryCpuVsBare: roundRatios(getComparison.rounds, 'memoryBackend', 'bareGrpcServer', serverCpu),
  redisCpuVsBare: roundRatios(getComparison.rounds, 'redisBackend', 'bareGrpcServer', serverCpu),
  memoryRequestsVsGrpcGo: roundRatios(getComparison.rounds, 'memoryBackend', 'grpcGoServer', requestsPerSecond),
  memoryRequestsVsBare: roundRatios(getComparison.rounds, 'memoryBackend', 'bareGrpcServer', requestsPerSecond),
  redisRequestsVsBare: roundRatios(getComparison.rounds, 'redisBackend', 'bareGrpcServer', requestsPerSecond),
};
const getMedians = Object.fromEntries(targets.map((t) => [t.name, median(getComparison.rounds.map((round) => round[t.name]!))]));
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
const profiles = {
  memoryBackend: await profileGets((nodeOptions) => startCacheService({ Cache__Backend: 'memory' }, nodeOptions)),
  bareGrpcServer: await profileGets((nodeOptions) => startPeer(process.execPath, [...nodeOptions, bareServer])),
};
const loadAtEnd = load();

// The caller's CPU per get, coalesced against one call each, within each round of the same service.
const callerRatio = (target: Target): number =>
  ratio(medianOf(target.runs.getCoalesced.map((run, r) => run.clientCpuMicrosPerOp! / target.runs.get[r]!.clientCpuMicrosPerOp!)), 1);
const [memoryTarget, redisTarget] = [targets[2]!, targets[3]!];

const ratios = {
  // The peer comparison, one call per Get (its own rounds): the median of the ratios within a round.
  memoryGetCpuVsGrpcGo: getVsPeers.memoryCpuVsGrpcGo.median,
  redisGetCpuVsGrpcGo: getVsPeers.redisCpuVsGrpcGo.median,
  bareGetCpuVsGrpcGo: getVsPeers.bareCpuVsGrpcGo.median,
  memoryGetCpuVsBare: getVsPeers.memoryCpuVsBare.median,
  redisGetCpuVsBare: getVsPeers.redisCpuVsBare.median,
  memoryGetVsGrpcGo: getVsPeers.memoryRequestsVsGrpcGo.median,
  memoryGetVsBare: getVsPeers.memoryRequestsVsBare.median,
  memorySetVsBare: ratio(memory!.set.opsPerSecond, bare!.set.opsPerSecond),
  redisGetVsBare: getVsPeers.redisRequestsVsBare.median,
  redisSetVsBare: ratio(redis!.set.opsPerSecond, bare!.set.opsPerSecond),
  // Throughput a server could reach if it alone were the bottleneck: bare CPU per op / its CPU per op.
  memoryGetVsBareByServerCpu: ratio(1, getVsPeers.memoryCpuVsBare.median),
  memorySetVsBareByServerCpu: ratio(bare!.set.serverCpuMicrosPerOp!, memory!.set.serverCpuMicrosPerOp!),
  redisGetVsBareByServerCpu: ratio(1, getVsPeers.redisCpuVsBare.median),
  redisSetVsBareByServerCpu: ratio(bare!.set.serverCpuMicrosPerOp!, redis!.set.serverCpuMicrosPerOp!),
  // Coalesced gets (the client's default) against one Get each: CPU per get in the caller and the service.
  memoryCallerCpuCoalescedVsPerCall: callerRatio(memoryTarget),
  redisCallerCpuCoalescedVsPerCall: callerRatio(redisTarget),
  memoryServiceCpuCoalescedVsGrpcGo: ratio(memory!.getCoalesced!.serverCpuMicrosPerOp!, go!.get.serverCpuMicrosPerOp!),
  memoryGetCoalescedVsPerCall: ratio(memory!.getCoalesced!.opsPerSecond, memory!.get.opsPerSecond),
  // The atomic operations against Get on the same server, same run.
  memoryIncrementVsGet: ratio(memory!.increment!.opsPerSecond, memory!.get.opsPerSecond),
  memorySetIfAbsentVsGet: ratio(memory!.setIfAbsent!.opsPerSecond, memory!.get.opsPerSecond),
  redisIncrementVsGet: ratio(redis!.increment!.opsPerSecond, redis!.get.opsPerSecond),
  redisSetIfAbsentVsGet: ratio(redis!.setIfAbsent!.opsPerSecond, redis!.get.opsPerSecond),
};

const range = (r: { median: number; min: number; max: number }): string => `${r.median}× (rounds ${r.min}–${r.max})`;
const frames = (summary: ProfileSummary): string[] => [
  `    by origin: ${summary.byOrigin.slice(0, 8).map((share) => `${share.name} ${share.percent}%`).join(', ')}`,
  ...summary.topFrames.slice(0, 10).map((share) => `    ${String(share.percent).padStart(5)}%  ${share.name}`),
];

process.stdout.write(
  [
    `cache Get, one call each (${GET_ROUNDS} interleaved rounds of ${GET_DURATION_MS / 1000} s, median round; load average ${loadAtStart} at start, ${loadAtEnd} at end): requests/s, p99 ms, server CPU µs/call`,
    ...(['grpcGoServer', 'bareGrpcServer', 'memoryBackend', 'redisBackend'] as const).map((name) => {
      const get = getMedians[name]!;
      return `  ${name.padEnd(15)} ${String(get.opsPerSecond).padStart(7)}/s  p99 ${get.p99Ms} ms  ${get.serverCpuMicrosPerOp} µs`;
    }),
    `  server CPU per call, median of the ratios within a round: memory backend ${range(getVsPeers.memoryCpuVsGrpcGo)} grpc-go's (target ≤ 2), redis backend ${range(getVsPeers.redisCpuVsGrpcGo)}, bare grpc-js ${range(getVsPeers.bareCpuVsGrpcGo)}; memory backend ${range(getVsPeers.memoryCpuVsBare)} bare grpc-js's`,
    `caller CPU per get, coalesced vs one call each (median of the ratios within a round): memory ${memory!.getCoalesced!.clientCpuMicrosPerOp} vs ${memory!.get.clientCpuMicrosPerOp} µs (${ratios.memoryCallerCpuCoalescedVsPerCall}×, target ≤ 0.5), redis ${redis!.getCoalesced!.clientCpuMicrosPerOp} vs ${redis!.get.clientCpuMicrosPerOp} µs (${ratios.redisCallerCpuCoalescedVsPerCall}×); service CPU per coalesced get ${memory!.getCoalesced!.serverCpuMicrosPerOp} µs (${ratios.memoryServiceCpuCoalescedVsGrpcGo}× grpc-go's per call)`,
    `invalidation latency p99: redis (2 replicas, 2 streams) ${redisInvalidation.p99Ms} ms, memory ${memoryInvalidation.p99Ms} ms (target ≤ 50), missed ${redisInvalidation.missed + memoryInvalidation.missed}`,
    `CPU profile of Get, one call each (node --cpu-prof, ${PROFILE_DURATION_MS / 1000} s of load, idle samples left out): memory backend, ${profiles.memoryBackend.samples} samples`,
    ...frames(profiles.memoryBackend),
    `  bare grpc-js server, ${profiles.bareGrpcServer.samples} samples`,
    ...frames(profiles.bareGrpcServer),
    '',
  ].join('\n'),
);

writeResults('cache', {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, loadAverage: { start: loadAtStart, end: loadAtEnd } },
  setup: {
    concurrency: CONCURRENCY,
    durationMsPerRun: DURATION_MS,
    rounds: ROUNDS,
    getComparison: { rounds: GET_ROUNDS, durationMsPerRun: GET_DURATION_MS, warmupMs: GET_WARMUP_MS },
    valueBytes: VALUE.length,
    keys: KEYS,
    loadGenerator: 'this process, @sp/cache-client on one @grpc/grpc-js channel per target (coalesce off: one call per operation; getCoalesced: the default); each server in its own process; the Get comparison has rounds of its own and reports the median of the ratios within a round; other figures are the median of interleaved rounds',
    grpcGoServer: 'bench/go/cache-peer (grpc-go, in-memory map), built by bench/lib/go-peer.sh',
    footprintNodeOptions: FOOTPRINT_NODE_OPTIONS.join(' '),
  },
  getComparison: { medians: getMedians, ratios: getVsPeers, loadAverageAfterEachRound: getComparison.loadAverages },
  ...figures,
  invalidationLatency: { redis: redisInvalidation, memory: memoryInvalidation },
  redisBenchmark: redisBench,
  ratios,
  targets: { memoryGetCpuVsGrpcGo: 2, callerCpuCoalescedVsPerCall: 0.5, invalidationP99Ms: 50, memoryVsBare: 0.9, redisVsBare: 0.7, memoryFootprintMaxMiB: 400 },
  memoryFootprint: footprint,
  cpuProfiles: profiles,
});
