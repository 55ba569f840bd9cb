// Where one attack of bench/grpc-attacks.bench.ts spends the cache service's time: the service as
// deployed under `--cpu-prof`, the attack run once while the well-behaved client calls Get in a
// worker thread, the service's own event-loop delay (prom-client's nodejs_eventloop_lag_max_seconds,
// read before and after, so the figure is the attack's), its CPU, and from the profile the longest
// stretch without an idle sample and what ran in it. Usage:
//   flock /work/logs/heavy.lock node --import tsx bench/grpc-attack-profile.ts resetStorm [repeat]
// The attack runs in a process of its own, as in the benchmark.
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { attackIn } from './lib/attacker-process.ts';
import { startCacheService } from './lib/cache-peers.ts';
import { summarizeProfile } from './lib/cpu-profile.ts';
import { processMetrics } from './lib/process-metrics.ts';
import { cpuMicros, freePort, percentile, rssBytes } from './lib/stats.ts';

const name = process.argv[2] ?? 'resetStorm';
const repeat = Number(process.argv[3] ?? 1);
const dir = mkdtempSync(join(tmpdir(), 'grpc-attack-profile-'));
const managementPort = await freePort();
const service = await startCacheService({ Cache__Backend: 'memory', Management__Port: String(managementPort) }, ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--cpu-prof-interval=200']);
const port = Number(service.address.split(':')[1]);
const writer = createCacheClient<Buffer>({ address: service.address, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
await writer.set('good:key', Buffer.alloc(100, 'g'));
await writer.set('attack:big', Buffer.alloc(1024 * 1024, 'b'));

const lagMax = async (): Promise<number> => ((await processMetrics(managementPort)).nodejs_eventloop_lag_max_seconds ?? NaN) * 1000;
const memory = async (): Promise<string> => {
  const figures = await processMetrics(managementPort);
  const mib = (bytes: number | undefined): string => ((bytes ?? NaN) / 2 ** 20).toFixed(1);
  return `heap used ${mib(figures.nodejs_heap_size_used_bytes)} total ${mib(figures.nodejs_heap_size_total_bytes)} external ${mib(figures.nodejs_external_memory_bytes)} MiB`;
};

const worker = new Worker(new URL('./lib/good-client-worker.ts', import.meta.url), { workerData: { address: service.address, key: 'good:key' } });
const stopGood = (): Promise<{ latencies: number[]; failures: number }> =>
  new Promise((resolve) => {
    worker.once('message', resolve);
    worker.postMessage('stop');
  });

const attack = (): Promise<unknown> => attackIn(name, port);

/** The attacks' times on the monotonic clock the profile's timestamps use (µs). */
const windows: Array<{ from: number; to: number }> = [];
const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);
for (let r = 0; r < repeat; r++) {
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await lagMax();
  const rssBefore = rssBytes(service.pid);
  const cpuBefore = cpuMicros(service.pid);
  worker.postMessage('start');
  const started = performance.now();
  const from = monotonicMicros();
  const report = await attack();
  windows.push({ from, to: monotonicMicros() });
  const ms = Math.round(performance.now() - started);
  const { latencies } = await stopGood();
  const lag = await lagMax();
  const cpuMs = (cpuMicros(service.pid) - cpuBefore) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  process.stdout.write(
    `${name} ${ms} ms: service CPU ${cpuMs.toFixed(0)} ms, event-loop delay max ${lag.toFixed(0)} ms, good p99 ${percentile(sorted, 99).toFixed(1)} ms max ${sorted.at(-1)?.toFixed(1)} (${latencies.length} calls), RSS ${(rssBytes(service.pid) / 2 ** 20).toFixed(1)} (was ${(rssBefore / 2 ** 20).toFixed(1)}) MiB, ${await memory()}, load ${loadavg()[0]!.toFixed(2)}  ${JSON.stringify((report as { answers?: unknown }).answers)}\n`,
  );
  for (const wait of [3000, 7000]) {
    await new Promise((resolve) => setTimeout(resolve, wait));
    process.stdout.write(`  +${wait === 3000 ? 3 : 10} s: RSS ${(rssBytes(service.pid) / 2 ** 20).toFixed(1)} MiB, ${await memory()}\n`);
  }
}
worker.postMessage('close');
writer.close();
await service.stop();

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
const file = readdirSync(dir).find((entry) => entry.endsWith('.cpuprofile'))!;
const profile = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { nodes: Node[]; samples: number[]; timeDeltas: number[]; startTime: number };
rmSync(dir, { recursive: true, force: true });
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
// The longest stretches without an idle sample (time on the event loop's thread, or off the CPU while busy).
const stretches: Array<{ from: number; to: number; first: number; last: number }> = [];
let at = profile.startTime;
let open: { from: number; first: number } | undefined;
profile.samples.forEach((id, index) => {
  at += profile.timeDeltas[index] ?? 0;
  // (program) is native code on the event loop's thread (nghttp2 among it): busy, not idle.
  const idle = byId.get(id)!.callFrame.functionName === '(idle)';
  if (!idle && open === undefined) open = { from: at, first: index };
  if (idle && open !== undefined) {
    stretches.push({ from: open.from, to: at, first: open.first, last: index });
    open = undefined;
  }
});
process.stdout.write(`attack windows (ms from the profile's start): ${windows.map((w) => `${((w.from - profile.startTime) / 1000).toFixed(0)}–${((w.to - profile.startTime) / 1000).toFixed(0)}`).join(', ')}\n`);
const during = (s: { from: number; to: number }): boolean => windows.some((w) => s.to >= w.from && s.from <= w.to + 1_000_000);
stretches.splice(0, stretches.length, ...stretches.filter(during));
stretches.sort((a, b) => b.to - b.from - (a.to - a.from));
process.stdout.write(`longest busy stretches during the attacks (ms, at): ${stretches.slice(0, 8).map((s) => `${((s.to - s.from) / 1000).toFixed(1)} @${((s.from - profile.startTime) / 1000).toFixed(0)}`).join(', ')}\n`);
const longest = stretches[0]!;
const inLongest = { ...profile, samples: profile.samples.slice(longest.first, longest.last), timeDeltas: profile.timeDeltas.slice(longest.first, longest.last) };
const summary = summarizeProfile(inLongest, 30);
process.stdout.write(`the longest, by self time (${summary.samples} samples):\n${summary.topFrames.map((frame) => `  ${frame.percent}%  ${frame.name}`).join('\n')}\n`);
process.stdout.write(`by origin: ${summary.byOrigin.map((o) => `${o.name} ${o.percent}%`).join(', ')}\n`);
// Inclusive time within the longest stretch, by function (each sample's stack counted once per function).
const inclusive = new Map<string, number>();
for (const id of inLongest.samples) {
  const seen = new Set<string>();
  for (let node: number | undefined = id; node !== undefined; node = parent.get(node)) {
    const frame = byId.get(node)!.callFrame;
    const key = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*\/(node_modules|packages|services)\//, '$1/')}:${frame.lineNumber + 1}`;
    if (!seen.has(key)) inclusive.set(key, (inclusive.get(key) ?? 0) + 1);
    seen.add(key);
  }
}
process.stdout.write(
  `inclusive:\n${[...inclusive.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 40)
    .map(([key, count]) => `  ${((100 * count) / inLongest.samples.length).toFixed(1)}%  ${key}`)
    .join('\n')}\n`,
);
const firstWindow = (windows[0]!.from - profile.startTime) / 1000;
const whole = summarizeProfile(profile, 25, firstWindow);
process.stdout.write(`from the first attack on, by self time (${whole.samples} samples):\n${whole.topFrames.map((frame) => `  ${frame.percent}%  ${frame.name}`).join('\n')}\n`);
