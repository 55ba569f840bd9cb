// make bench: the cache's gRPC port under each attack of issue 39 (test/support/grpc-attacks.ts, at
// the scale), against the service as the chart runs it (bench/lib/cache-peers.ts), while a
// well-behaved client calls Get in a loop. Per attack: the good client's p99 alone just before and
// during the attack (the same run, so the machine's load is the same), its failures, the
// service's own longest event-loop delay during the attack (prom-client's
// nodejs_eventloop_lag_max_seconds: what the server made everyone wait, whatever the client's own
// scheduling), the service's RSS at the start, its peak, and after the attackers left and 10 s
// passed (with the V8 heap, external memory and malloc's brk heap then), and whether the process
// stayed up. The attacker runs in a process of its own (bench/lib/attacker-process.ts), not beside the good
// client in the benchmark's process; the service's event-loop delay tells its stalls from the
// good client's scheduling on this machine's two cores. Targets (issue 39): RSS growth < 100 MB, the p99 within 100 ms
// of the quiet p99, RSS back within 20 MB of the start, no restart. Results:
// bench/results/grpc-attacks.json. BENCH_ATTACKS picks attacks (comma-separated names, default
// all); BENCH_SERVICE_ENV adds variables to the service's environment (`NAME=value,…`, e.g. a
// malloc setting to compare).
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { attackIn } from './lib/attacker-process.ts';
import { ATTACKS, BIG_KEY } from './lib/attacks.ts';
import { startCacheService } from './lib/cache-peers.ts';
import { processMetrics, type ProcessMetrics } from './lib/process-metrics.ts';
import { freePort, percentile, rssBytes, writeResults } from './lib/stats.ts';

const MiB = 1024 * 1024;
const QUIET_MS = 3000;
const SETTLE_MS = 10_000;
const TARGETS = { rssGrowthMiB: 100, p99AboveQuietMs: 100, rssAfterMiB: 20 };

const serviceEnv = Object.fromEntries((process.env.BENCH_SERVICE_ENV ?? '').split(',').filter((pair) => pair.includes('=')).map((pair) => [pair.slice(0, pair.indexOf('=')), pair.slice(pair.indexOf('=') + 1)]));
const managementPort = await freePort();
const service = await startCacheService({ Cache__Backend: 'memory', Management__Port: String(managementPort), ...serviceEnv });
const port = Number(service.address.split(':')[1]);
const writer = createCacheClient<Buffer>({ address: service.address, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
await writer.set(BIG_KEY, Buffer.alloc(MiB, 'b'));
await writer.set('good:key', Buffer.alloc(100, 'g'));

const metrics = (): Promise<ProcessMetrics> => processMetrics(managementPort);

/** Resident MiB of the service's malloc brk heap (`[heap]`) and of its other anonymous mappings (V8's pages, malloc's mmaps and arenas). */
function residentParts(pid: number): { brkMiB: number; otherAnonymousMiB: number } {
  let brk = 0;
  let other = 0;
  let current = '';
  for (const line of readFileSync(`/proc/${pid}/smaps`, 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header) current = header[1]!;
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss === null) continue;
    if (current === '[heap]') brk += Number(rss[1]);
    else if (current === '' || current.startsWith('[anon')) other += Number(rss[1]);
  }
  return { brkMiB: mib(brk * 1024), otherAnonymousMiB: mib(other * 1024) };
}

const chosen = (process.env.BENCH_ATTACKS ?? Object.keys(ATTACKS).join(',')).split(',').map((name) => name.trim());
const unknown = chosen.filter((name) => !(name in ATTACKS));
if (unknown.length > 0) throw new Error(`BENCH_ATTACKS: unknown ${unknown.join(', ')} (attacks: ${Object.keys(ATTACKS).join(', ')})`);

/** The well-behaved client (bench/lib/good-client-worker.ts), in its own thread. */
const worker = new Worker(new URL('./lib/good-client-worker.ts', import.meta.url), { workerData: { address: service.address, key: 'good:key' } });
function goodClient(): { stop(): Promise<{ latencies: number[]; failures: number }> } {
  worker.postMessage('start');
  return {
    stop: () =>
      new Promise((resolve) => {
        worker.once('message', resolve);
        worker.postMessage('stop');
      }),
  };
}

const p99 = (latencies: number[]): number => percentile(Float64Array.from(latencies).sort(), 99);
const mib = (bytes: number): number => Number((bytes / MiB).toFixed(1));
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const startRss = rssBytes(service.pid);
const startParts = residentParts(service.pid);
const results: Record<string, unknown> = {};
for (const name of chosen) {
  await metrics(); // prom-client's event-loop delay counts from its last scrape
  const quiet = goodClient();
  await sleep(QUIET_MS);
  const quietRun = await quiet.stop();
  const before = rssBytes(service.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(service.pid))), 50);
  const quietLoopDelay = (await metrics()).nodejs_eventloop_lag_max_seconds ?? NaN;
  const good = goodClient();
  const started = performance.now();
  const report = await attackIn(name, port);
  const attackMs = Math.round(performance.now() - started);
  const attacked = await good.stop();
  const loopDelay = (await metrics()).nodejs_eventloop_lag_max_seconds ?? NaN;
  clearInterval(sampler);
  await sleep(SETTLE_MS);
  const up = alive(service.pid);
  const after = up ? rssBytes(service.pid) : NaN;
  const settled: ProcessMetrics = up ? await metrics() : {};
  const figures = {
    attackMs,
    quietP99Ms: p99(quietRun.latencies),
    p99Ms: p99(attacked.latencies),
    goodCalls: attacked.latencies.length,
    goodFailures: attacked.failures + quietRun.failures,
    serviceLoopDelayMaxMs: { quiet: Math.round(quietLoopDelay * 1000), attacked: Math.round(loopDelay * 1000) },
    rssBeforeMiB: mib(before),
    rssGrowthMiB: mib(peak - before),
    rssAfterMiB: mib(after),
    rssAfterVsBeforeMiB: mib(after - before),
    rssAfterVsStartMiB: mib(after - startRss),
    after: up && { heapUsedMiB: mib(settled.nodejs_heap_size_used_bytes ?? NaN), heapTotalMiB: mib(settled.nodejs_heap_size_total_bytes ?? NaN), externalMiB: mib(settled.nodejs_external_memory_bytes ?? NaN), ...residentParts(service.pid) },
    alive: up,
    loadAverage: Number(loadavg()[0]!.toFixed(2)),
    answers: report.answers,
    connections: report.connections,
  };
  const met = figures.alive && figures.goodFailures === 0 && figures.rssGrowthMiB < TARGETS.rssGrowthMiB && figures.p99Ms - figures.quietP99Ms < TARGETS.p99AboveQuietMs;
  process.stdout.write(
    `${name.padEnd(16)} ${String(attackMs).padStart(6)} ms  good p99 ${figures.quietP99Ms} → ${figures.p99Ms} ms (${figures.goodCalls} calls, ${figures.goodFailures} failed)  service loop delay ≤ ${figures.serviceLoopDelayMaxMs.attacked} ms  RSS ${figures.rssBeforeMiB} MiB +${figures.rssGrowthMiB} peak, +${figures.rssAfterVsBeforeMiB} after (${JSON.stringify(figures.after)})  load ${figures.loadAverage}  ${figures.alive ? 'up' : 'EXITED'}  ${met ? 'targets met' : 'TARGETS MISSED'}  ${JSON.stringify(report.answers)}\n`,
  );
  results[name] = { ...figures, targetsMet: met, rssBackWithinTarget: figures.rssAfterVsBeforeMiB < TARGETS.rssAfterMiB };
  if (!figures.alive) break;
}
const endRss = rssBytes(service.pid);
const endParts = residentParts(service.pid);
worker.postMessage('close');
writer.close();
await service.stop();

writeResults('grpc-attacks', {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  service: 'the cache service as the chart runs it (bench/lib/cache-peers.ts: startCacheService), memory backend, default Grpc__* limits',
  goodClient: '@sp/cache-client, one Get at a time with 2 ms pauses; quiet p99 measured for 3 s just before each attack',
  targets: TARGETS,
  serviceEnv,
  attacker: 'its own process (bench/lib/attacker-process.ts)',
  rss: { startMiB: mib(startRss), endMiB: mib(endRss), endVsStartMiB: mib(endRss - startRss), start: startParts, end: endParts },
  attacks: results,
});
