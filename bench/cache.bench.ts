// make bench: the cache service's Get and Set over loopback, one call per operation, against three
// peers on the same proto (a grpc-go server with an in-memory map, built by bench/lib/go-peer.sh;
// a bare @grpc/grpc-js server answering a constant; and, as a floor experiment, Get and Set written
// by hand on node:http2 with protobufjs and no gRPC library) and redis-benchmark at the same
// concurrency: requests/s, p99 and CPU µs per call of each server. Then the caller's side: the
// same gets coalesced into GetMany (the client's default) against sending one Get each, with the
// CPU each costs the caller and the service. The atomic Increment and SetIfAbsent next to Get on
// the same servers in the same rounds; the invalidation latency from a Set through one replica to
// the Subscribe streams of both; the memory backend's footprint with 1,000,000 entries of 100 bytes.
// Each server runs in its own process; the load comes from this one (the project's own load
// client: @grpc/grpc-js through @sp/cache-client). The peer comparison of Get has rounds of its
// own, short and many, and reports the median of the ratios taken within each round (a ratio of
// two runs seconds apart survives the shared machine's load far better than either figure).
// Last, the memory backend, the bare server and the raw node:http2 server run once more under
// `node --cpu-prof` and the top frames of their profiles are printed. Results:
// bench/results/cache.json. BENCH_CACHE_PARTS picks parts (comma-separated, default all):
// get (the peer comparison), ops (Set, coalesced Get, Increment, SetIfAbsent), large-set (Sets of
// 1 MiB values with the transport's flow-control windows against HTTP/2's default 64 KiB ones, as
// the server had them before, and wider ones), invalidation, redis-benchmark, footprint, profile,
// deployment (what the deployed command line costs per Get: the service as deployed against the
// same without the chart's heap bound, with glibc's malloc in place of the image's jemalloc, and
// `dist/main.js` alone without the heap bound, in interleaved rounds
// with grpc-go; a diagnosis, not a way to run it: the heap bound keeps the container's memory),
// allocation (the deployed service's heap allocation per Get, what its scavenges promote, and the
// allocation sites, from --trace-gc-nvp and V8's sampling heap profiler: per call, so the machine's
// load does not move them).
import { execFileSync } from 'node:child_process';
import { cpus } from 'node:os';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import type { ProfileSummary } from './lib/cpu-profile.ts';
import {
  bareServer,
  buildGoPeer,
  CONCURRENCY,
  DEPLOYED_ENV,
  DEPLOYED_NODE_OPTIONS,
  getRounds,
  KEYS,
  load,
  profileGets,
  rawHttp2Server,
  roundRatios,
  startCacheService,
  startPeer,
  VALUE,
  type GetRound,
  type RatioRange,
  type Server,
} from './lib/cache-peers.ts';
import { allocationPerCall } from './lib/heap-sampling.ts';
import { invalidationLatency, type LatencyFigures } from './lib/invalidation-latency.ts';
import { ALLOCATOR_SETTINGS } from '../test/support/make-up-settings.ts';
import { npmStart } from '../test/support/service-process.ts';
import { drive, freePort, infraEnv, median, medianOf, rssBytes, writeResults, type RunFigures } from './lib/stats.ts';

const DURATION_MS = 5000;
const ROUNDS = 3;
// The peer comparison of Get: every target once per round, in a rotating order.
const GET_ROUNDS = 9;
const GET_DURATION_MS = 3000;
const PROFILE_DURATION_MS = 8000;
/** Gets per phase of the allocation part (warm-up, each sampling profile), and of its GC totals. */
const ALLOCATION_CALLS = 20_000;
const ALLOCATION_GC_CALLS = 60_000;
const ENTRIES = 1_000_000;
const INVALIDATION_WRITES = 1000;
const LARGE_VALUE = Buffer.alloc(1024 * 1024, 'L');
/** Sets of 1 MiB in flight at once on the one connection: within its budget (Grpc__ConnectionBufferBytes, 8 MiB). */
const LARGE_SET_CONCURRENCY = [1, 4];
/** The windows the server had before issue 39 (HTTP/2's defaults), and wider ones than the settings' defaults (256 KiB, 512 KiB). */
const HTTP2_DEFAULT_WINDOWS = { Grpc__StreamWindowBytes: '65535', Grpc__ConnectionWindowBytes: '65535' };
const WIDE_WINDOWS = { Grpc__StreamWindowBytes: String(1024 * 1024), Grpc__ConnectionWindowBytes: String(2 * 1024 * 1024) };
const PARTS = ['get', 'ops', 'large-set', 'invalidation', 'redis-benchmark', 'footprint', 'profile', 'deployment', 'allocation'] as const;
const chosen = new Set((process.env.BENCH_CACHE_PARTS ?? PARTS.join(',')).split(',').map((part) => part.trim()));
const unknownParts = [...chosen].filter((part) => !(PARTS as readonly string[]).includes(part));
if (unknownParts.length > 0) throw new Error(`BENCH_CACHE_PARTS: unknown ${unknownParts.join(', ')} (parts: ${PARTS.join(', ')})`);
const runs = (part: (typeof PARTS)[number]): boolean => chosen.has(part);

interface Target extends Server {
  name: TargetName;
  /** The cache service itself (the peers answer Get and Set only). */
  service: boolean;
  runs: { get: RunFigures[]; set: RunFigures[]; getCoalesced: RunFigures[]; increment: RunFigures[]; setIfAbsent: RunFigures[] };
}

const TARGET_NAMES = ['grpcGoServer', 'rawHttp2Server', 'bareGrpcServer', 'memoryBackend', 'redisBackend'] as const;
type TargetName = (typeof TARGET_NAMES)[number];
const LABELS: Record<TargetName, string> = {
  grpcGoServer: 'grpc-go (peer)',
  rawHttp2Server: 'raw node:http2 (floor experiment)',
  bareGrpcServer: 'bare grpc-js (constant)',
  memoryBackend: 'cache service, memory',
  redisBackend: 'cache service, redis',
};

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

/** Every operation on every target, in `ROUNDS` interleaved rounds. */
async function operationRounds(targets: Target[]): Promise<void> {
  for (let r = 0; r < ROUNDS; r++) for (const target of targets) await round(target, r);
}

/** Sets of 1 MiB values on one connection, at each of LARGE_SET_CONCURRENCY, added to `figures` by concurrency. */
async function largeSets(target: Server, figures: Record<string, RunFigures[]>): Promise<void> {
  const client = createCacheClient<Buffer>({ address: target.address, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
  for (const concurrency of LARGE_SET_CONCURRENCY) {
    (figures[`concurrency${concurrency}`] ??= []).push(await drive((i) => client.set(`large-${i % 16}`, LARGE_VALUE), concurrency, DURATION_MS, target.pid));
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
  // The chart's heap bound for a 512 MiB container (as every service the bench starts): V8 grows
  // its heap lazily, so an unbounded process keeps garbage a sized one collects (README, "Memory sizing").
  const service = await startCacheService({ Cache__Backend: 'memory', Cache__Capacity: String(ENTRIES) });
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
const range = (r: RatioRange): string => `${r.median}× (rounds ${r.min}–${r.max})`;
const serverCpu = (run: RunFigures): number => run.serverCpuMicrosPerOp!;
const requestsPerSecond = (run: RunFigures): number => run.opsPerSecond;

// All five servers run for the whole measurement, loaded one at a time in interleaved rounds,
// so a disturbance of the shared machine hits every target alike; each figure is the median round.
const loadAtStart = load();
/** The test Redis (the parts that use it): memory-only parts run without the dependencies. */
let redisUrlOf: string | undefined;
const redisUrl = (): string => (redisUrlOf ??= infraEnv().REDIS_URL!);
/** Prints a part's figures as soon as it has them (a long run cut short keeps what it measured). */
const print = (...lines: string[]): void => void process.stdout.write(`${lines.join('\n')}\n`);
const results: Record<string, unknown> = {};

if (runs('get') || runs('ops')) {
  const goPeer = buildGoPeer();
  const starters: Record<TargetName, () => Promise<Server>> = {
    grpcGoServer: () => startPeer(goPeer),
    rawHttp2Server: () => startPeer(process.execPath, [rawHttp2Server]),
    bareGrpcServer: () => startPeer(process.execPath, [bareServer]),
    memoryBackend: () => startCacheService({ Cache__Backend: 'memory' }),
    redisBackend: () => startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl(), Cache__KeyPrefix: 'bench:' }),
  };
  const targets: Target[] = [];
  for (const name of TARGET_NAMES) targets.push({ name, ...(await starters[name]()), service: name === 'memoryBackend' || name === 'redisBackend', runs: newRuns() });
  if (runs('get')) {
    const comparison = await getRounds(targets, GET_ROUNDS, GET_DURATION_MS);
    const vs = (a: TargetName, b: TargetName, figure = serverCpu): RatioRange => roundRatios(comparison.rounds, a, b, figure);
    const getVsPeers = {
      rawHttp2CpuVsGrpcGo: vs('rawHttp2Server', 'grpcGoServer'),
      bareCpuVsGrpcGo: vs('bareGrpcServer', 'grpcGoServer'),
      memoryCpuVsGrpcGo: vs('memoryBackend', 'grpcGoServer'),
      redisCpuVsGrpcGo: vs('redisBackend', 'grpcGoServer'),
      bareCpuVsRawHttp2: vs('bareGrpcServer', 'rawHttp2Server'),
      memoryCpuVsRawHttp2: vs('memoryBackend', 'rawHttp2Server'),
      memoryCpuVsBare: vs('memoryBackend', 'bareGrpcServer'),
      redisCpuVsBare: vs('redisBackend', 'bareGrpcServer'),
      memoryRequestsVsGrpcGo: vs('memoryBackend', 'grpcGoServer', requestsPerSecond),
      memoryRequestsVsBare: vs('memoryBackend', 'bareGrpcServer', requestsPerSecond),
      redisRequestsVsBare: vs('redisBackend', 'bareGrpcServer', requestsPerSecond),
    };
    const medians = Object.fromEntries(TARGET_NAMES.map((name) => [name, median(comparison.rounds.map((r: GetRound) => r[name]!))]));
    print(
      `cache Get, one call each (${GET_ROUNDS} interleaved rounds of ${GET_DURATION_MS / 1000} s, median round; load average ${loadAtStart} at start, after each round ${comparison.loadAverages.join(', ')}): requests/s, p99, server CPU per call, and that CPU against grpc-go's (median of the ratios within a round, lowest–highest round)`,
      ...TARGET_NAMES.map((name) => {
        const get = medians[name]!;
        const against = name === 'grpcGoServer' ? '1×' : range(vs(name, 'grpcGoServer'));
        return `  ${LABELS[name].padEnd(34)} ${String(get.opsPerSecond).padStart(6)}/s  p99 ${String(get.p99Ms).padStart(6)} ms  ${String(get.serverCpuMicrosPerOp).padStart(6)} µs  ${against}`;
      }),
      `  target: cache service ≤ 2× grpc-go's CPU per call. Node's own floor (node:http2 + protobufjs, no gRPC library) is ${range(getVsPeers.rawHttp2CpuVsGrpcGo)}; the cache service (the platform's gRPC server on node:http2, memory backend) over that floor ${range(getVsPeers.memoryCpuVsRawHttp2)}; a bare grpc-js server over it ${range(getVsPeers.bareCpuVsRawHttp2)}; the service against bare grpc-js: memory backend ${range(getVsPeers.memoryCpuVsBare)}, redis backend ${range(getVsPeers.redisCpuVsBare)}`,
    );
    results.getComparison = { medians, ratios: getVsPeers, loadAverageAfterEachRound: comparison.loadAverages, rounds: comparison.rounds };
  }
  if (runs('ops')) {
    const opsLoadAtStart = load();
    await operationRounds(targets);
    const figures = Object.fromEntries(
      targets.map((t) => [
        t.name,
        t.service
          ? { get: median(t.runs.get), set: median(t.runs.set), getCoalesced: median(t.runs.getCoalesced), increment: median(t.runs.increment), setIfAbsent: median(t.runs.setIfAbsent) }
          : { get: median(t.runs.get), set: median(t.runs.set) },
      ]),
    );
    const [go, , bare, memory, redis] = TARGET_NAMES.map((name) => figures[name]!);
    // The caller's CPU per get, coalesced against one call each, within each round of the same service.
    const callerRatio = (target: Target): number =>
      ratio(medianOf(target.runs.getCoalesced.map((run, r) => run.clientCpuMicrosPerOp! / target.runs.get[r]!.clientCpuMicrosPerOp!)), 1);
    const [memoryTarget, redisTarget] = [targets[3]!, targets[4]!];
    const ratios = {
      memorySetVsBare: ratio(memory!.set.opsPerSecond, bare!.set.opsPerSecond),
      redisSetVsBare: ratio(redis!.set.opsPerSecond, bare!.set.opsPerSecond),
      memorySetVsBareByServerCpu: ratio(bare!.set.serverCpuMicrosPerOp!, memory!.set.serverCpuMicrosPerOp!),
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
    print(
      `caller CPU per get, coalesced vs one call each (${ROUNDS} rounds, median of the ratios within a round; load average ${opsLoadAtStart} → ${load()}): memory ${memory!.getCoalesced!.clientCpuMicrosPerOp} vs ${memory!.get.clientCpuMicrosPerOp} µs (${ratios.memoryCallerCpuCoalescedVsPerCall}×, target ≤ 0.5), redis ${redis!.getCoalesced!.clientCpuMicrosPerOp} vs ${redis!.get.clientCpuMicrosPerOp} µs (${ratios.redisCallerCpuCoalescedVsPerCall}×); service CPU per coalesced get ${memory!.getCoalesced!.serverCpuMicrosPerOp} µs (${ratios.memoryServiceCpuCoalescedVsGrpcGo}× grpc-go's per call)`,
    );
    Object.assign(results, figures, { ratios });
  }
  for (const target of targets) await target.stop();
}

if (runs('large-set')) {
  // Both services run throughout; every round loads each in turn (alternating which goes first).
  const variants = {
    windows: await startCacheService({ Cache__Backend: 'memory' }),
    http2Defaults: await startCacheService({ Cache__Backend: 'memory', ...HTTP2_DEFAULT_WINDOWS }),
    wide: await startCacheService({ Cache__Backend: 'memory', ...WIDE_WINDOWS }),
  };
  const loadBefore = load();
  const figures: Record<string, Record<string, RunFigures[]>> = {};
  for (let r = 0; r < ROUNDS; r++) {
    const names = ['windows', 'http2Defaults', 'wide'] as const;
    const order = [...names.slice(r % 3), ...names.slice(0, r % 3)];
    for (const name of order) await largeSets(variants[name], (figures[name] ??= {}));
  }
  for (const target of Object.values(variants)) await target.stop();
  const medians = Object.fromEntries(Object.entries(figures).map(([name, byConcurrency]) => [name, Object.fromEntries(Object.entries(byConcurrency).map(([key, list]) => [key, median(list)]))]));
  print(
    `cache Set of 1 MiB values, the transport's default windows (256 KiB per stream, 512 KiB per connection) vs HTTP/2's default 64 KiB and wide ones (1 MiB, 2 MiB) (${ROUNDS} interleaved rounds of ${DURATION_MS / 1000} s, median round; load average ${loadBefore} → ${load()}):`,
    ...Object.entries(medians).flatMap(([name, byConcurrency]) =>
      Object.entries(byConcurrency).map(([key, run]) => `  ${name.padEnd(14)} ${key.padEnd(13)} ${String(run.opsPerSecond).padStart(5)}/s  p50 ${run.p50Ms} ms  p99 ${run.p99Ms} ms  server ${run.serverCpuMicrosPerOp} µs/Set  errors ${run.errors}`),
    ),
  );
  results.largeSet = { valueBytes: LARGE_VALUE.length, http2DefaultWindows: HTTP2_DEFAULT_WINDOWS, wideWindows: WIDE_WINDOWS, medians, loadAverage: { before: loadBefore, after: load() } };
}

if (runs('invalidation')) {
  // Two replicas on the test Redis, a stream on each, Sets through both in turn (with Redis'
  // notifications read directly beside them); and the memory backend (one replica announcing its
  // own writes).
  const keyPrefix = 'bench-inv:';
  const replicas = [
    await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl(), Cache__KeyPrefix: keyPrefix }),
    await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl(), Cache__KeyPrefix: keyPrefix }),
  ];
  const loadBefore = load();
  const addresses = replicas.map((replica) => replica.address);
  const redisLatency = await invalidationLatency(addresses, addresses, INVALIDATION_WRITES, { redisUrl: redisUrl(), keyPrefix });
  for (const replica of replicas) await replica.stop();
  const single = await startCacheService({ Cache__Backend: 'memory' });
  const memoryLatency = await invalidationLatency([single.address, single.address], [single.address], INVALIDATION_WRITES);
  await single.stop();
  const loadAfter = load();
  const ms = (figures: { p50Ms: number; p99Ms: number; maxMs: number }): string => `p50 ${figures.p50Ms}, p99 ${figures.p99Ms}, max ${figures.maxMs} ms`;
  const described = (figures: LatencyFigures): string => `${ms(figures)}, missed ${figures.missed}; the Set's own round trip ${ms(figures.setRoundTrip)}`;
  print(
    `invalidation latency, Set start → every stream (${INVALIDATION_WRITES} writes; load average ${loadBefore} → ${loadAfter}; target p99 ≤ 50 ms):`,
    `  redis, 2 replicas, 2 streams: ${described(redisLatency)}`,
    `    Redis' notification read directly here: ${ms(redisLatency.redisDirect!)}; what the service added per stream: ${ms(redisLatency.serviceAdded!)}`,
    `  memory, 1 replica, 2 streams: ${described(memoryLatency)}`,
  );
  results.invalidationLatency = { redis: redisLatency, memory: memoryLatency, loadAverage: { before: loadBefore, after: loadAfter } };
}

if (runs('redis-benchmark')) results.redisBenchmark = redisBenchmark(redisUrl());
if (runs('footprint')) results.memoryFootprint = await memoryFootprint();

if (runs('deployment')) {
  const variants: Array<{ name: string; start: () => Promise<Server> }> = [
    { name: 'grpcGoServer', start: () => startPeer(buildGoPeer()) },
    { name: 'deployed', start: () => startCacheService({ Cache__Backend: 'memory' }) },
    { name: 'noHeapBound', start: () => startCacheService({ Cache__Backend: 'memory' }, [], { heapOptions: [] }) },
    // The young generation's size is what the heap bound changes per call (scavenges of each call's garbage).
    { name: 'oldSpaceOnly', start: () => startCacheService({ Cache__Backend: 'memory' }, [], { heapOptions: DEPLOYED_NODE_OPTIONS.filter((option) => !option.startsWith('--max-semi-space-size')) }) },
    { name: 'semiSpace16', start: () => startCacheService({ Cache__Backend: 'memory' }, [], { heapOptions: [...DEPLOYED_NODE_OPTIONS.filter((option) => !option.startsWith('--max-semi-space-size')), '--max-semi-space-size=16'] }) },
    { name: 'semiSpace32', start: () => startCacheService({ Cache__Backend: 'memory' }, [], { heapOptions: [...DEPLOYED_NODE_OPTIONS.filter((option) => !option.startsWith('--max-semi-space-size')), '--max-semi-space-size=32'] }) },
    // The image's allocator (jemalloc, preloaded) left out: glibc's malloc, as before issue 39.
    { name: 'glibcMalloc', start: () => startCacheService({ Cache__Backend: 'memory' }, [], { withoutEnv: ALLOCATOR_SETTINGS }) },
    { name: 'mainAlone', start: () => startCacheService({ Cache__Backend: 'memory', Cache__Partitions: '' }, [], { heapOptions: [], mainAlone: true }) },
  ];
  const targets: Array<Server & { name: string }> = [];
  for (const variant of variants) targets.push({ name: variant.name, ...(await variant.start()) });
  const loadBefore = load();
  const comparison = await getRounds(targets, GET_ROUNDS, GET_DURATION_MS);
  for (const target of targets) await target.stop();
  const ratios = Object.fromEntries(
    variants.slice(1).map(({ name }) => [name, { vsGrpcGo: roundRatios(comparison.rounds, name, 'grpcGoServer', serverCpu), vsDeployed: roundRatios(comparison.rounds, name, 'deployed', serverCpu) }]),
  );
  print(
    `cache Get as deployed and without parts of the deployed command line (${GET_ROUNDS} interleaved rounds of ${GET_DURATION_MS / 1000} s, median of the ratios within a round; load average ${loadBefore}, after each round ${comparison.loadAverages.join(', ')}):`,
    ...Object.entries(ratios).map(([name, r]) => `  ${name.padEnd(12)} ${range(r.vsGrpcGo)} grpc-go's CPU per call, ${range(r.vsDeployed)} the deployed service's`),
  );
  results.deployment = { ratios, loadAverageAfterEachRound: comparison.loadAverages, rounds: comparison.rounds };
}

if (runs('allocation')) {
  const inspectPort = await freePort();
  const service = await startCacheService({ Cache__Backend: 'memory' }, [`--inspect=127.0.0.1:${inspectPort}`, '--trace-gc-nvp'], { captureOutput: true });
  const client = createCacheClient<Buffer>({ address: service.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer);
  for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
  const figures = await allocationPerCall(inspectPort, service.output!, (i) => client.get(`key-${i % KEYS}`), CONCURRENCY, ALLOCATION_CALLS, ALLOCATION_GC_CALLS);
  client.close();
  await service.stop();
  const { gc } = figures;
  const shares = (list: Array<{ name: string; bytes: number }>): string => list.map(({ name, bytes }) => `${name} ${bytes}`).join(', ');
  print(
    `cache Get as deployed, per call (${CONCURRENCY} in flight; GC totals over ${ALLOCATION_GC_CALLS} Gets, each sampling profile over ${ALLOCATION_CALLS}; load average ${load()}):`,
    `  allocated ${gc.allocatedBytesPerCall} B, promoted by scavenges ${gc.promotedBytesPerCall} B, survived a scavenge ${gc.survivedBytesPerCall} B; per 10,000 Gets ${gc.scavengesPer10k} scavenges, ${gc.markCompactsPer10k} mark-compacts, ${gc.pauseMsPer10k} ms of pauses`,
    `  sampled ${figures.sampledBytesPerCall} B, by origin: ${shares(figures.byOrigin)}`,
    `  of which freed only by a mark-compact ${figures.oldGarbageBytesPerCall} B, by origin: ${shares(figures.oldGarbageByOrigin)}`,
    ...figures.topSites.slice(0, 12).map(({ name, bytes }) => `    ${String(bytes).padStart(5)} B  ${name}`),
  );
  results.allocation = figures;
}

if (runs('profile')) {
  const profiles: Record<string, ProfileSummary> = {
    memoryBackend: await profileGets((nodeOptions) => startCacheService({ Cache__Backend: 'memory' }, nodeOptions), PROFILE_DURATION_MS),
    bareGrpcServer: await profileGets((nodeOptions) => startPeer(process.execPath, [...nodeOptions, bareServer]), PROFILE_DURATION_MS),
    rawHttp2Server: await profileGets((nodeOptions) => startPeer(process.execPath, [...nodeOptions, rawHttp2Server]), PROFILE_DURATION_MS),
  };
  print(`CPU profiles of Get, one call each (node --cpu-prof, ${PROFILE_DURATION_MS / 1000} s of load, idle samples left out; load average ${load()}):`);
  for (const [name, summary] of Object.entries(profiles)) {
    print(
      `  ${LABELS[name as TargetName]}, ${summary.samples} samples`,
      `    by origin: ${summary.byOrigin.slice(0, 8).map((share) => `${share.name} ${share.percent}%`).join(', ')}`,
      ...summary.topFrames.slice(0, 10).map((share) => `    ${String(share.percent).padStart(5)}%  ${share.name}`),
    );
  }
  results.cpuProfiles = profiles;
}
const loadAtEnd = load();

writeResults('cache', {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, loadAverage: { start: loadAtStart, end: loadAtEnd } },
  setup: {
    parts: [...chosen],
    concurrency: CONCURRENCY,
    durationMsPerRun: DURATION_MS,
    rounds: ROUNDS,
    getComparison: { rounds: GET_ROUNDS, durationMsPerRun: GET_DURATION_MS },
    valueBytes: VALUE.length,
    keys: KEYS,
    loadGenerator: 'this process, @sp/cache-client on one @grpc/grpc-js channel per target (coalesce off: one call per operation; getCoalesced: the default); each server in its own process; the Get comparison has rounds of its own and reports the median of the ratios within a round; other figures are the median of interleaved rounds',
    grpcGoServer: 'bench/go/cache-peer (grpc-go, in-memory map), built by bench/lib/go-peer.sh',
    rawHttp2Server: 'bench/lib/raw-http2-cache-server.ts (floor experiment: node:http2 and protobufjs, no gRPC library, in-memory map)',
    cacheService: `as the chart runs it: npm start's command line (${npmStart('cache').args.join(' ')}), NODE_OPTIONS ${DEPLOYED_NODE_OPTIONS.join(' ')}, ${Object.entries(DEPLOYED_ENV).map(([name, value]) => `${name}=${value}`).join(' ')}`,
  },
  ...results,
  targets: { memoryGetCpuVsGrpcGo: 2, callerCpuCoalescedVsPerCall: 0.5, invalidationP99Ms: 50, memoryVsBare: 0.9, redisVsBare: 0.7, memoryFootprintMaxMiB: 400 },
});
