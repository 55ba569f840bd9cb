// make bench: settings of the cache service's command line and environment weighed against each
// other on what they change, in interleaved rounds (each round starts every variant afresh, in a
// rotating order): CPU per Get (one call each, 32 in flight), the service's CPU for a storm of
// 10,000 reset streams (test/support/grpc-attacks.ts: resetStorm) and its RSS 10 s after the
// never-ending streams (50 connections × 100 streams of 512 KiB unfinished messages, held 5 s)
// against just before them. The variants: the service as deployed (the reference: source maps on,
// Debian's jemalloc preloaded as the image and `make up` run it), `--enable-source-maps` off (the
// Dockerfile's comment on ENTRYPOINT says what was decided), glibc's malloc in place of jemalloc,
// and glibc's with MALLOC_MMAP_THRESHOLD_ at 16 KiB (the Dockerfile's comment on the allocator
// and docs/benchmarks.md, "Hostile clients", say what was decided). Medians over the rounds, and
// of each round's ratio to the first variant. Results: bench/results/cache-variants.json. BENCH_ROUNDS (5),
// BENCH_VARIANTS (names, comma-separated; default all), BENCH_PARTS (get, storm, neverEnding;
// default all), BENCH_STORMS (reset storms per service, their CPU summed; 1).
import { cpus, loadavg } from 'node:os';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { neverEnding, resetStorm } from '../test/support/grpc-attacks.ts';
import { ALLOCATOR_SETTINGS } from '../test/support/make-up-settings.ts';
import { CONCURRENCY, GET_WARMUP_MS, KEYS, startCacheService, VALUE, type ServiceVariant } from './lib/cache-peers.ts';
import { cpuMicros, drive, medianOf, rssBytes, writeResults } from './lib/stats.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const GET_MS = 3000;
const SETTLE_MS = 10_000;
const MiB = 1024 * 1024;
const MMAP_THRESHOLD = { MALLOC_MMAP_THRESHOLD_: '16384' };
const PARTS = new Set((process.env.BENCH_PARTS ?? 'get,storm,neverEnding').split(',').map((part) => part.trim()));
const STORMS = Number(process.env.BENCH_STORMS ?? 1);

interface Variant {
  label: string;
  env: Record<string, string>;
  service: ServiceVariant;
}

/** The first is the reference the ratios are taken against. */
const VARIANTS: Record<string, Variant> = {
  deployed: { label: 'as deployed: --enable-source-maps, jemalloc (LD_PRELOAD, background thread, 1 s decay)', env: {}, service: {} },
  sourceMapsOff: { label: 'no --enable-source-maps, jemalloc', env: {}, service: { sourceMaps: false } },
  // glibc's malloc keeps freed memory in a brk heap that shrinks only at its top and in per-thread
  // arenas, which is where it keeps what the never-ending streams took (docs/benchmarks.md).
  glibcMalloc: { label: '--enable-source-maps, glibc malloc (default mmap threshold)', env: {}, service: { withoutEnv: ALLOCATOR_SETTINGS } },
  glibcMmap16k: { label: '--enable-source-maps, glibc malloc, MALLOC_MMAP_THRESHOLD_=16384', env: MMAP_THRESHOLD, service: { withoutEnv: ALLOCATOR_SETTINGS } },
};

interface Figures {
  getCpuMicros?: number;
  getsPerSecond?: number;
  stormCpuMs?: number;
  stormMs?: number;
  rssBeforeMiB?: number;
  rssAfterNeverEndingMiB?: number;
  rssReturnedWithinMiB?: number;
  loadAverage: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const mib = (bytes: number): number => Number((bytes / MiB).toFixed(1));
const load = (): number => Number(loadavg()[0]!.toFixed(2));

async function measure(variant: Variant): Promise<Figures> {
  const service = await startCacheService({ Cache__Backend: 'memory', ...variant.env }, [], variant.service);
  const port = Number(service.address.split(':')[1]);
  const client = createCacheClient<Buffer>({ address: service.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer);
  try {
    for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
    const figures: Figures = { loadAverage: 0 };
    if (PARTS.has('get')) {
      const gets = await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, GET_MS, service.pid, GET_WARMUP_MS);
      Object.assign(figures, { getCpuMicros: gets.serverCpuMicrosPerOp!, getsPerSecond: gets.opsPerSecond });
    }
    if (PARTS.has('storm')) {
      const cpuBefore = cpuMicros(service.pid);
      const stormStarted = performance.now();
      for (let storm = 0; storm < STORMS; storm++) await resetStorm(port, 10_000);
      Object.assign(figures, { stormMs: Math.round(performance.now() - stormStarted), stormCpuMs: Math.round((cpuMicros(service.pid) - cpuBefore) / 1000) });
      await sleep(1000);
    }
    if (PARTS.has('neverEnding')) {
      const before = rssBytes(service.pid);
      await neverEnding(port, { connections: 50, streams: 100, announced: 512 * 1024, sent: 512 * 1024 - 1, holdMs: 5000 });
      await sleep(SETTLE_MS);
      const after = rssBytes(service.pid);
      Object.assign(figures, { rssBeforeMiB: mib(before), rssAfterNeverEndingMiB: mib(after), rssReturnedWithinMiB: mib(after - before) });
    }
    figures.loadAverage = load();
    return figures;
  } finally {
    client.close();
    await service.stop();
  }
}

const names = (process.env.BENCH_VARIANTS ?? Object.keys(VARIANTS).join(',')).split(',').map((name) => name.trim());
const unknown = names.filter((name) => !(name in VARIANTS));
if (unknown.length > 0) throw new Error(`BENCH_VARIANTS: unknown ${unknown.join(', ')} (variants: ${Object.keys(VARIANTS).join(', ')})`);
const rounds: Array<Record<string, Figures>> = [];
for (let r = 0; r < ROUNDS; r++) {
  const round: Record<string, Figures> = {};
  for (let k = 0; k < names.length; k++) {
    const name = names[(r + k) % names.length]!;
    round[name] = await measure(VARIANTS[name]!);
    process.stdout.write(`round ${r + 1} ${name.padEnd(28)} ${JSON.stringify(round[name])}\n`);
  }
  rounds.push(round);
}

const FIGURES = (['getCpuMicros', 'stormCpuMs', 'rssReturnedWithinMiB'] as const).filter((figure) => rounds[0]![names[0]!]![figure] !== undefined);
const reference = names[0]!;
const summary = Object.fromEntries(
  names.map((name) => [
    name,
    {
      label: VARIANTS[name]!.label,
      medians: Object.fromEntries(FIGURES.map((figure) => [figure, medianOf(rounds.map((round) => round[name]![figure]!))])),
      byRound: Object.fromEntries(FIGURES.map((figure) => [figure, rounds.map((round) => round[name]![figure])])),
      ratiosToReference: Object.fromEntries(
        FIGURES.filter((figure) => figure !== 'rssReturnedWithinMiB').map((figure) => [figure, Number(medianOf(rounds.map((round) => round[name]![figure]! / round[reference]![figure]!)).toFixed(3))]),
      ),
    },
  ]),
);
writeResults('cache-variants', {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version, loadAverages: rounds.flatMap((round) => names.map((name) => round[name]!.loadAverage)) },
  service: 'the cache service as the chart runs it (bench/lib/cache-peers.ts), memory backend, one fresh process per variant and round',
  parts: [...PARTS],
  stormsPerService: STORMS,
  reference,
  summary,
  rounds,
});
