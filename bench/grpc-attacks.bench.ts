// make bench: the cache's gRPC port under each attack of issue 39 (test/support/grpc-attacks.ts, at
// the scale), against the service as the chart runs it (bench/lib/cache-peers.ts), while a
// well-behaved client calls Get in a loop. Per attack: the good client's p99 alone just before and
// during the attack (the same run, so the machine's load is the same), its failures, the service's
// RSS at the start, its peak, and after the attackers left and 10 s passed, and whether the
// process stayed up. Targets (issue 39): RSS growth < 100 MB, the p99 within 100 ms of the quiet
// p99, RSS back within 20 MB of the start, no restart. Results: bench/results/grpc-attacks.json.
// BENCH_ATTACKS picks attacks (comma-separated names, default all).
import { cpus, loadavg } from 'node:os';
import { Worker } from 'node:worker_threads';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { bigHeaders, neverEnding, noPreface, pingFlood, reflectionFlood, resetStorm, settingsFlood, tinyFrames, unreadAnswers, unreadSubscribe, type AttackReport } from '../test/support/grpc-attacks.ts';
import { startCacheService } from './lib/cache-peers.ts';
import { percentile, rssBytes, writeResults } from './lib/stats.ts';

const MiB = 1024 * 1024;
const QUIET_MS = 3000;
const SETTLE_MS = 10_000;
const TARGETS = { rssGrowthMiB: 100, p99AboveQuietMs: 100, rssAfterMiB: 20 };

const service = await startCacheService({ Cache__Backend: 'memory' });
const port = Number(service.address.split(':')[1]);
const writer = createCacheClient<Buffer>({ address: service.address, deadlineMs: 10_000, retries: 0, coalesce: false }, bufferSerializer);
await writer.set('attack:big', Buffer.alloc(MiB, 'b'));
await writer.set('good:key', Buffer.alloc(100, 'g'));
const longKey = 'k'.repeat(1000);

const ATTACKS: Record<string, () => Promise<AttackReport>> = {
  resetStorm: () => resetStorm(port, 10_000),
  tinyFrames: () => tinyFrames(port, 30, 60_000),
  neverEnding: () => neverEnding(port, { connections: 50, streams: 100, announced: 512 * 1024, sent: 512 * 1024 - 1, holdMs: 5000 }),
  unreadGetMany: () => unreadAnswers(port, { connections: 10, streams: 50, key: 'attack:big', fits: 3, holdMs: 15_000 }),
  reflectionFlood: () => reflectionFlood(port, { streams: 10, requests: 8000, holdMs: 5000 }),
  pingFlood: () => pingFlood(port, 5000),
  settingsFlood: () => settingsFlood(port, 5000),
  noPreface: () => noPreface(port, { connections: 1000, holdMs: 12_000 }),
  unreadSubscribe: () => unreadSubscribe(port, { streams: 100, durationMs: 10_000, write: (i) => writer.set(`${longKey}${i % 1000}`, Buffer.from('v')) }),
  bigHeaders: () => bigHeaders(port, { calls: 3000, bytes: 60 * 1024 }),
};
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
const results: Record<string, unknown> = {};
for (const name of chosen) {
  const quiet = goodClient();
  await sleep(QUIET_MS);
  const quietRun = await quiet.stop();
  const before = rssBytes(service.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rssBytes(service.pid))), 50);
  const good = goodClient();
  const started = performance.now();
  const report = await ATTACKS[name]!();
  const attackMs = Math.round(performance.now() - started);
  const attacked = await good.stop();
  clearInterval(sampler);
  await sleep(SETTLE_MS);
  const after = rssBytes(service.pid);
  const figures = {
    attackMs,
    quietP99Ms: p99(quietRun.latencies),
    p99Ms: p99(attacked.latencies),
    goodCalls: attacked.latencies.length,
    goodFailures: attacked.failures + quietRun.failures,
    rssBeforeMiB: mib(before),
    rssGrowthMiB: mib(peak - before),
    rssAfterMiB: mib(after),
    rssAfterVsStartMiB: mib(after - startRss),
    alive: alive(service.pid),
    loadAverage: Number(loadavg()[0]!.toFixed(2)),
    answers: report.answers,
    connections: report.connections,
  };
  const met = figures.alive && figures.goodFailures === 0 && figures.rssGrowthMiB < TARGETS.rssGrowthMiB && figures.p99Ms - figures.quietP99Ms < TARGETS.p99AboveQuietMs;
  process.stdout.write(
    `${name.padEnd(16)} ${String(attackMs).padStart(6)} ms  good p99 ${figures.quietP99Ms} → ${figures.p99Ms} ms (${figures.goodCalls} calls, ${figures.goodFailures} failed)  RSS ${figures.rssBeforeMiB} MiB +${figures.rssGrowthMiB} peak, ${figures.rssAfterMiB} after  ${figures.alive ? 'up' : 'EXITED'}  ${met ? 'targets met' : 'TARGETS MISSED'}  ${JSON.stringify(report.answers)}\n`,
  );
  results[name] = { ...figures, targetsMet: met };
  if (!figures.alive) break;
}
const endRss = rssBytes(service.pid);
worker.postMessage('close');
writer.close();
await service.stop();

writeResults('grpc-attacks', {
  date: new Date().toISOString(),
  machine: { cpus: cpus().length, node: process.version },
  service: 'the cache service as the chart runs it (bench/lib/cache-peers.ts: startCacheService), memory backend, default Grpc__* limits',
  goodClient: '@sp/cache-client, one Get at a time with 2 ms pauses; quiet p99 measured for 3 s just before each attack',
  targets: TARGETS,
  rss: { startMiB: mib(startRss), endMiB: mib(endRss), endVsStartMiB: mib(endRss - startRss) },
  attacks: results,
});
