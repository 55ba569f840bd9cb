// make bench: the graph controller at cluster scale (issue #26). For each size (1,000 and 10,000
// annotated Services in 50 namespaces) on a private etcd + kube-apiserver of this checkout (so
// etcd's growth is the run's own, and the shared test apiserver is left alone), with the real
// graph registry in this process on its memory:// store, and the controller as main.ts runs it
// (built, a process of its own, so its CPU and memory are its own, with the V8 heap bounds the chart
// sets for its default 256Mi memory limit):
//
// - start → all registered: from spawning the controller until the registry held every name;
// - one annotation change → registered: the Service's path annotation changed, until the
//   registry received the new URL; while idle (5 times), and during a full resync;
// - one idle resync: the controller's CPU (less its idle rate) and the registry writes it made;
// - the controller's RSS (peak, sampled every 250 ms) and etcd's database growth for the run.
//
// The namespaces are created here and removed at the end (their finalizer cleared: no
// controller-manager runs); the private etcd and apiserver are then stopped and their data removed.
// BENCH_GC_SIZES=1000 runs one size only.
//
// Part `restart` (issue 40; the catch-up the kube-apiserver test asserts, timed): the controller as
// above, with its default settings (backoff 200 ms doubling to 30 s), watching BENCH_GC_RESTART_SERVICES
// (3,000) annotated Services; in each of BENCH_GC_RESTART_ROUNDS (3) rounds the API server is
// SIGKILLed and kept down until the informer's backoff has grown past 20 s (its log), then started
// again (same etcd); right after its /readyz answers 200, one Service is annotated and another one's
// annotation removed. From that /readyz: the controller's probe restarting the informer, the
// informer listed and watching again (both its log lines), the new name registered and the removed
// one unregistered (the registry's answered writes). Target: caught up (both) ≤ 5 s.
// BENCH_GC_PARTS=scale,restart (default both) picks the parts.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { createServer, type Server } from 'node:http';
import { cpus, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions } from '@kubernetes/client-node';
import { createLogger, createRegistry } from '@sp/observability';
import { closeGracefully, listen } from '@sp/http';
import { createGraphRegistryApp, createGraphStore } from '@sp/graph-registry';
import { PooledKubeConfig } from '../services/graph-controller/dist/kube/kube-client.js';
import { startPrivateKube, type PrivateKube } from './lib/private-kube.ts';
import { cpuMicros, freePort, rssBytes, writeResults } from './lib/stats.ts';

const PARTS = ['scale', 'restart'];
const chosen = new Set((process.env.BENCH_GC_PARTS ?? PARTS.join(',')).split(',').map((part) => part.trim()));
const unknownParts = [...chosen].filter((part) => !PARTS.includes(part));
if (unknownParts.length > 0) throw new Error(`BENCH_GC_PARTS: unknown ${unknownParts.join(', ')} (parts: ${PARTS.join(', ')})`);
const SIZES = (process.env.BENCH_GC_SIZES ?? '1000,10000').split(',').map(Number);
const RESTART_SERVICES = Number(process.env.BENCH_GC_RESTART_SERVICES ?? 3000);
const RESTART_ROUNDS = Number(process.env.BENCH_GC_RESTART_ROUNDS ?? 3);
/** Down until the informer's next restart by its timer is at least this far off. */
const GROWN_BACKOFF_MS = 20_000;
const NAMESPACES = 50;
const API_KEY = 'bench-controller-key-0123456789';
const MAIN = fileURLToPath(new URL('../services/graph-controller/dist/main.js', import.meta.url));
const MiB = 1024 * 1024;
/** The V8 bounds the chart derives from the controller's default memory limit (256Mi: heap.auto). */
const CHART_NODE_OPTIONS = ['--max-old-space-size=160', '--max-semi-space-size=4'];

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () => loadavg().map((value) => Number(value.toFixed(2)));
const seconds = (ms: number) => Number((ms / 1000).toFixed(2));

interface Write {
  at: number;
  method: string;
  name: string;
}

/** The graph registry (services/graph-registry) on its memory store, logging every write it answered. */
async function startRegistry(): Promise<{ url: string; writes: Write[]; names: Set<string>; close(): Promise<void> }> {
  const logger = createLogger({ service: 'graph-registry', level: 'silent' });
  const store = createGraphStore({ kind: 'memory' }, logger);
  const handle = createGraphRegistryApp({ store, apiKeys: [API_KEY], logger, registry: createRegistry('graph-registry') }).callback();
  const writes: Write[] = [];
  const names = new Set<string>();
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' || req.method === 'DELETE') {
      const name = (req.url ?? '/').slice(1);
      res.on('finish', () => {
        writes.push({ at: performance.now(), method: req.method!, name });
        if (req.method === 'POST') names.add(name);
        else names.delete(name);
      });
    }
    void handle(req, res);
  });
  const port = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    names,
    close: async () => {
      server.closeAllConnections();
      await closeGracefully(server, 100);
      await store.close();
    },
  };
}

/** Runs `task` over `items`, `concurrency` at a time. */
async function inParallel<T>(items: readonly T[], concurrency: number, task: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

/** The controller's metrics that show a resync: reconciles that found nothing to do, and the queue. */
async function scrape(port: number): Promise<{ unchanged: number; depth: number }> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const value = (pattern: RegExp) => Number(pattern.exec(text)?.[1] ?? 0);
  return { unchanged: value(/^graph_controller_reconciles_total\{[^}]*result="unchanged"[^}]*\} (\S+)$/m), depth: value(/^graph_controller_queue_depth(?:\{[^}]*\})? (\S+)$/m) };
}

async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await check())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

const serviceName = (index: number) => `svc-${index}`;
const namespaceOf = (index: number) => `bench-gc-${index % NAMESPACES}`;
const graphName = (index: number) => `g-${index}`;


/** The controller from its build as the chart runs it (its Node options), against `kubeconfig` and the bench's registry. */
function startController(kubeconfig: string, registryUrl: string, options: { nodeOptions?: string[]; stdout: 'ignore' | 'pipe'; env: Record<string, string> }): ChildProcess {
  return spawn(process.execPath, [...CHART_NODE_OPTIONS, ...(options.nodeOptions ?? []), MAIN], {
    stdio: ['ignore', options.stdout, 'inherit'],
    env: { PATH: process.env.PATH, KUBECONFIG: kubeconfig, Registry__Url: registryUrl, Registry__ApiKey: API_KEY, Controller__LeaseNamespace: 'platform', POD_NAME: 'bench', ...options.env },
  });
}

async function runSize(count: number, kube: PrivateKube): Promise<Record<string, unknown>> {
  const fileConfig = new KubeConfig();
  fileConfig.loadFromFile(kube.kubeconfig);
  // The controller's pooled connections: the library alone opens a TLS connection per request,
  // which made creating the Services the slowest part of the run (19 a second).
  const core = new PooledKubeConfig(fileConfig).makeApiClient(CoreV1Api);
  const dbAtStart = await kube.etcdDbBytes();
  const namespaces = ['platform', ...Array.from({ length: NAMESPACES }, (_, index) => namespaceOf(index))];
  for (const name of namespaces) await core.createNamespace({ body: { metadata: { name } } });
  const indexes = Array.from({ length: count }, (_, index) => index);
  const createdAt = performance.now();
  await inParallel(indexes, 16, (index) =>
    core.createNamespacedService({
      namespace: namespaceOf(index),
      body: { metadata: { name: serviceName(index), annotations: { 'graph-registry.io/name': graphName(index) } }, spec: { ports: [{ name: 'http', port: 8080 }] } },
    }),
  );
  process.stdout.write(`${count} Services created in ${seconds(performance.now() - createdAt)} s\n`);
  const dbAfterServices = await kube.etcdDbBytes();

  const registry = await startRegistry();
  const resyncSeconds = count >= 5000 ? 90 : 30;
  const managementPort = await freePort();
  const loadBefore = load();
  const serverCpuAtStart = { apiserver: cpuMicros(kube.apiserverPid), etcd: cpuMicros(kube.etcdPid), bench: process.cpuUsage() };
  const startedAt = performance.now();
  const profile = process.env.BENCH_GC_CPU_PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_GC_CPU_PROFILE}`] : [];
  const controller = startController(kube.kubeconfig, registry.url, { nodeOptions: profile, stdout: 'ignore', env: { Controller__ResyncSeconds: String(resyncSeconds), Management__Port: String(managementPort), Log__Level: 'warn' } });
  const pid = controller.pid!;
  let peakRss = 0;
  const rssTimer = setInterval(() => (peakRss = Math.max(peakRss, rssBytes(pid))), 250);
  try {
    await waitUntil('all registered', () => registry.names.size === count, 600_000);
    const startToRegistered = performance.now() - startedAt;
    const startCpu = cpuMicros(pid) / 1e6;
    const benchCpu = process.cpuUsage(serverCpuAtStart.bench);
    const startServerCpu = {
      apiserver: seconds((cpuMicros(kube.apiserverPid) - serverCpuAtStart.apiserver) / 1000),
      etcd: seconds((cpuMicros(kube.etcdPid) - serverCpuAtStart.etcd) / 1000),
      benchAndRegistry: seconds((benchCpu.user + benchCpu.system) / 1000),
    };
    const loadAtRegistered = load();
    process.stdout.write(`${count}: all registered ${seconds(startToRegistered)} s after start (controller CPU ${startCpu.toFixed(1)} s, ${JSON.stringify(startServerCpu)}, load ${loadAtRegistered.join(' ')})\n`);
    const rssAfterStart = rssBytes(pid);

    /** Changes the Service's path annotation; resolves with the ms until the registry received the new URL. */
    const change = async (index: number, path: string): Promise<number> => {
      const from = performance.now();
      await core.patchNamespacedService(
        { name: serviceName(index), namespace: namespaceOf(index), body: { metadata: { annotations: { 'graph-registry.io/path': path } } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      await waitUntil(`change of ${graphName(index)}`, () => registry.writes.some((write) => write.at > from && write.name === graphName(index)), 30_000, 5);
      return performance.now() - from;
    };
    await sleep(2000);
    const idleChanges: number[] = [];
    for (let round = 0; round < 5; round += 1) idleChanges.push(await change(round, `/idle-${round}`));

    // The controller's metrics are scraped every 100 ms while a resync is awaited and watched; the
    // idle rate is measured under the same scraping, so what is taken off the resync is its cost.
    const SCRAPE_MS = 100;
    /** Waits for the next resync to begin (reconciles that find nothing to do start counting). */
    const resyncBegins = async (): Promise<{ unchanged: number }> => {
      const before = await scrape(managementPort);
      await waitUntil('a resync', async () => (await scrape(managementPort)).unchanged > before.unchanged, (resyncSeconds + 30) * 1000, SCRAPE_MS);
      return before;
    };
    const resyncEnds = async (before: { unchanged: number }): Promise<void> => {
      await waitUntil(
        'the resync re-checked every key, and an empty queue',
        async () => {
          const now = await scrape(managementPort);
          return now.unchanged >= before.unchanged + count - 1 && now.depth === 0;
        },
        300_000,
        SCRAPE_MS,
      );
    };

    // The idle rate (lease renewals, the scrapes), to take off the resync's CPU: over the 5 s before
    // the resync's window when the samples reach back that far (the GraphRegistered Events of the
    // start may still be draining right after it), else over 3 s measured now.
    const idleFrom = { at: performance.now(), cpu: cpuMicros(pid) };
    await waitUntil('3 s', async () => (await scrape(managementPort)) && performance.now() - idleFrom.at > 3000, 10_000, SCRAPE_MS);
    const measuredIdleRate = (cpuMicros(pid) - idleFrom.cpu) / (performance.now() - idleFrom.at);
    // CPU sampled every 50 ms, so the resync's window can start just before its first sign.
    const samples: Array<{ at: number; cpu: number }> = [];
    const cpuTimer = setInterval(() => samples.push({ at: performance.now(), cpu: cpuMicros(pid) }), 50);
    const idleResync = await resyncBegins();
    const detectedAt = performance.now();
    const windowStart = samples.findLast((sample) => sample.at < detectedAt - 1000) ?? samples[0]!;
    const idleStart = samples.find((sample) => sample.at >= windowStart.at - 5000);
    const idleRate = idleStart && windowStart.at - idleStart.at >= 4000 ? (windowStart.cpu - idleStart.cpu) / (windowStart.at - idleStart.at) : measuredIdleRate;
    await resyncEnds(idleResync);
    await sleep(1000); // the relist's last pages
    clearInterval(cpuTimer);
    const windowEnd = { at: performance.now(), cpu: cpuMicros(pid) };
    // Raw: all the controller's CPU in the window (lease renewals, scrapes and any GraphRegistered
    // Events still draining included), an upper bound; the other takes the idle rate off, which a
    // busy idle window (Events draining) can push below zero.
    const resyncRawCpuMs = (windowEnd.cpu - windowStart.cpu) / 1000;
    const resyncCpuMs = resyncRawCpuMs - (idleRate * (windowEnd.at - windowStart.at)) / 1000;
    const resyncWrites = registry.writes.filter((write) => write.at >= windowStart.at && write.at <= windowEnd.at).length;
    const resyncDurationMs = windowEnd.at - 1000 - detectedAt;
    process.stdout.write(`${count}: idle resync ${seconds(resyncDurationMs)} s, CPU ${seconds(resyncCpuMs)} s (${seconds(resyncRawCpuMs)} s with the idle rate), ${resyncWrites} registry writes\n`);

    // A change made as soon as the next resync shows, while it re-checks every key.
    const busyResync = await resyncBegins();
    const duringResync = await change(5, '/during-resync');
    const progress = (await scrape(managementPort)).unchanged - busyResync.unchanged;
    await resyncEnds(busyResync);
    process.stdout.write(`${count}: change during a resync registered in ${Math.round(duringResync)} ms (${progress} of ${count} keys re-checked by then)\n`);

    const dbAtEnd = await kube.etcdDbBytes();
    const sorted = [...idleChanges].sort((a, b) => a - b);
    return {
      services: count,
      namespaces: NAMESPACES,
      startToAllRegisteredSeconds: seconds(startToRegistered),
      controllerCpuSecondsUntilAllRegistered: Number(startCpu.toFixed(2)),
      otherCpuSecondsUntilAllRegistered: startServerCpu,
      loadAverageAtAllRegistered: loadAtRegistered,
      changeToRegisteredMs: {
        idle: idleChanges.map(Math.round),
        idleMedian: Math.round(sorted[2]!),
        duringFullResync: Math.round(duringResync),
        keysRecheckedWhenRegistered: progress,
      },
      idleResync: { seconds: seconds(resyncDurationMs), controllerCpuSeconds: seconds(resyncCpuMs), controllerCpuSecondsWithIdle: seconds(resyncRawCpuMs), registryWrites: resyncWrites, resyncPeriodSeconds: resyncSeconds },
      controllerRssMiB: { peak: Math.round(peakRss / MiB), afterStart: Math.round(rssAfterStart / MiB), end: Math.round(rssBytes(pid) / MiB) },
      etcdDbGrowthMB: {
        wholeRun: Number(((dbAtEnd - dbAtStart) / 1e6).toFixed(1)),
        sinceServicesCreated: Number(((dbAtEnd - dbAfterServices) / 1e6).toFixed(1)),
        dbAtEndMB: Number((dbAtEnd / 1e6).toFixed(1)),
      },
      apiServerRssMiB: Math.round(rssBytes(kube.apiserverPid) / MiB),
      etcdRssMiB: Math.round(rssBytes(kube.etcdPid) / MiB),
      loadAverage: { beforeController: loadBefore, atEnd: load() },
    };
  } finally {
    clearInterval(rssTimer);
    controller.kill('SIGTERM');
    await once(controller, 'exit');
    await registry.close();
    // No controller-manager: the namespace finalizer is cleared by hand, as it would.
    for (const name of namespaces) {
      await core.deleteNamespace({ name }).catch(() => undefined);
      await core.replaceNamespaceFinalize({ name, body: { metadata: { name }, spec: { finalizers: [] } } }).catch(() => undefined);
    }
  }
}

/** The controller's JSON log lines, with when this process read them. */
interface LogLine {
  at: number;
  msg: string;
  retryInMs?: number;
}

/**
 * Kills the API server under the running controller and starts it again, `rounds` times, with
 * `count` annotated Services (and one plain Service per round) in the cluster; see the header.
 */
async function runRestart(count: number, rounds: number, kube: PrivateKube): Promise<Record<string, unknown>> {
  const fileConfig = new KubeConfig();
  fileConfig.loadFromFile(kube.kubeconfig);
  const core = new PooledKubeConfig(fileConfig).makeApiClient(CoreV1Api);
  const namespaces = ['platform', ...Array.from({ length: NAMESPACES }, (_, index) => namespaceOf(index))];
  for (const name of namespaces) await core.createNamespace({ body: { metadata: { name } } });
  const plainName = (round: number) => `plain-${round}`;
  const createdAt = performance.now();
  await inParallel(
    Array.from({ length: count }, (_, index) => index),
    16,
    (index) =>
      core.createNamespacedService({
        namespace: namespaceOf(index),
        body: { metadata: { name: serviceName(index), annotations: { 'graph-registry.io/name': graphName(index) } }, spec: { ports: [{ name: 'http', port: 8080 }] } },
      }),
  );
  for (let round = 0; round < rounds; round += 1) {
    await core.createNamespacedService({ namespace: namespaceOf(round), body: { metadata: { name: plainName(round) }, spec: { ports: [{ name: 'http', port: 8080 }] } } });
  }
  process.stdout.write(`restart: ${count} Services created in ${seconds(performance.now() - createdAt)} s\n`);

  const registry = await startRegistry();
  const lines: LogLine[] = [];
  // Log__Level info: the informer's restart lines are info.
  const controller = startController(kube.kubeconfig, registry.url, { stdout: 'pipe', env: { Management__Port: String(await freePort()), Log__Level: 'info' } });
  createInterface({ input: controller.stdout! }).on('line', (text) => {
    try {
      const { msg, retryInMs } = JSON.parse(text) as { msg: string; retryInMs?: number };
      lines.push({ at: performance.now(), msg, retryInMs });
    } catch {
      // not a log line
    }
  });
  const firstAfter = (from: number, msg: string): LogLine | undefined => lines.find((line) => line.at >= from && line.msg === msg);
  const runs: Array<Record<string, unknown>> = [];
  try {
    const startedAt = performance.now();
    await waitUntil('all registered', () => registry.names.size === count, 600_000);
    process.stdout.write(`restart: all ${count} registered ${seconds(performance.now() - startedAt)} s after start\n`);
    for (let round = 0; round < rounds; round += 1) {
      await sleep(2000);
      const loadBefore = load();
      kube.killApiserver();
      const killedAt = performance.now();
      // The informer's delays only: the work queue logs its reconciles' retries with retryInMs too.
      const informerDelays = () => lines.filter((line) => line.at >= killedAt && line.msg === 'informer failed: restarting it').map((line) => line.retryInMs ?? 0);
      await waitUntil('a backoff past 20 s', () => informerDelays().some((delay) => delay >= GROWN_BACKOFF_MS), 180_000, 100);
      const backoffMs = Math.max(...informerDelays());
      const readyAt = await kube.startApiserver();
      const added = `restart-${round}`;
      const removed = graphName(round);
      const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      await Promise.all([
        core.patchNamespacedService({ name: plainName(round), namespace: namespaceOf(round), body: { metadata: { annotations: { 'graph-registry.io/name': added } } } }, mergePatch),
        core.patchNamespacedService({ name: serviceName(round), namespace: namespaceOf(round), body: { metadata: { annotations: { 'graph-registry.io/name': null } } } }, mergePatch),
      ]);
      const changedAt = performance.now();
      const writeAt = (method: string, name: string) => registry.writes.find((write) => write.at >= killedAt && write.method === method && write.name === name)?.at;
      await waitUntil('the change registered', () => writeAt('POST', added) !== undefined && writeAt('DELETE', removed) !== undefined, 120_000, 5);
      await waitUntil('the informer watching again', () => firstAfter(killedAt, 'informer listed and watching again after a failure') !== undefined, 30_000);
      const since = (at: number | undefined) => (at === undefined ? null : Math.round(at - readyAt));
      const run = {
        downSeconds: seconds(readyAt - killedAt),
        backoffMsWhenStarted: backoffMs,
        fromReadyzMs: {
          changesMade: since(changedAt),
          informerRestartedByProbe: since(firstAfter(killedAt, 'API server answers again: restarting the informer now')?.at),
          watchingAgain: since(firstAfter(killedAt, 'informer listed and watching again after a failure')?.at),
          addedRegistered: since(writeAt('POST', added)),
          removedUnregistered: since(writeAt('DELETE', removed)),
          caughtUp: since(Math.max(writeAt('POST', added)!, writeAt('DELETE', removed)!)),
        },
        loadAverage: { beforeKill: loadBefore, atEnd: load() },
      };
      process.stdout.write(`restart round ${round + 1}: ${JSON.stringify(run)}\n`);
      runs.push(run);
    }
  } finally {
    controller.kill('SIGTERM');
    await once(controller, 'exit');
    await registry.close();
  }
  const caughtUp = runs.map((run) => (run.fromReadyzMs as { caughtUp: number }).caughtUp);
  return { services: count, namespaces: NAMESPACES, targetCaughtUpMs: 5000, worstCaughtUpMs: Math.max(...caughtUp), rounds: runs };
}

const results: Record<string, unknown>[] = [];
if (chosen.has('scale')) {
  for (const count of SIZES) {
    const kube = await startPrivateKube();
    try {
      results.push(await runSize(count, kube));
    } finally {
      kube.close();
    }
  }
}
let restart: Record<string, unknown> | undefined;
if (chosen.has('restart')) {
  const kube = await startPrivateKube();
  try {
    restart = await runRestart(RESTART_SERVICES, RESTART_ROUNDS, kube);
  } finally {
    kube.close();
  }
}
writeResults('graph-controller', {
  note: 'private etcd + kube-apiserver 1.35 of test/infra/kube.sh; the registry on memory://; the controller built, as a process; see bench/graph-controller.bench.ts',
  machine: { cpus: cpus().length, node: process.version },
  parts: [...chosen],
  runs: results,
  ...(restart ? { restart } : {}),
});
