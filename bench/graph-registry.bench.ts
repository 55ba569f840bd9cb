// make bench: the graph registry's hot path, `GET /{name}` with a valid API key, against its
// ceiling on this machine: a bare Koa server that answers a constant after one ioredis GET of the
// same key. Both servers run in this process (built code: @sp/graph-registry's dist) on loopback
// against the shared Redis; the load generator (autocannon) runs in a child process of its own,
// so it does not share the servers' event loop. Rounds alternate the order of the two servers to
// cancel drift. The registry batches concurrent Redis commands (ioredis auto-pipelining), which the
// plain bare server does not; a third target, the bare server with auto-pipelining too, shows the
// cost of the registry's own code alone. Results: bench/results/graph-registry.json.
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { createLogger, createRegistry } from '@sp/observability';
import { closeGracefully, listen, requestListener } from '@sp/http';
import { createGraphRegistryApp, createGraphStore } from '@sp/graph-registry';
import { load, medianOf, type LoadFigures } from './lib/http-load.ts';
import { infraEnv, writeResults } from './lib/stats.ts';

const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 5);
const API_KEY = 'bench-key-0123456789abcdef0123456789';
const GRAPH_URL = 'http://orders.shop.svc.cluster.local:4000/graphql';

interface Figures extends LoadFigures {
  /** CPU time the server process spent per request (user + system), measured around the run. */
  cpuMicrosPerRequest?: number;
}

type TargetName = 'registry' | 'bare' | 'barePipelined';

interface Target {
  name: TargetName;
  url: string;
  headers: Record<string, string>;
  close(): Promise<void>;
}

async function serve(handler: Koa): Promise<{ server: Server; port: number }> {
  const server = createServer(requestListener(handler));
  return { server, port: await listen(server, 0, '127.0.0.1') };
}

/** The registry as main.ts wires it (built code), with a silent logger: it logs no line per request anyway. */
async function startRegistry(url: string, name: string): Promise<Target> {
  const logger = createLogger({ service: 'graph-registry', level: 'silent' });
  const store = createGraphStore({ kind: 'redis', url }, logger);
  const app = createGraphRegistryApp({ store, apiKeys: [API_KEY], logger, registry: createRegistry('graph-registry') });
  const { server, port } = await serve(app);
  const base = `http://127.0.0.1:${port}`;
  const registered = await fetch(`${base}/${name}`, { method: 'POST', headers: { 'x-api-key': API_KEY, 'content-type': 'text/plain' }, body: GRAPH_URL });
  if (registered.status !== 204) throw new Error(`registering the graph answered ${registered.status}`);
  const check = await fetch(`${base}/${name}`, { headers: { 'x-api-key': API_KEY } });
  if ((await check.text()) !== GRAPH_URL) throw new Error('the registered graph does not read back');
  return {
    name: 'registry',
    url: `${base}/${name}`,
    headers: { 'x-api-key': API_KEY },
    close: async () => {
      await closeGracefully(server, 1000);
      await store.close();
    },
  };
}

/** The ceiling: Koa, one ioredis GET of the same record, a constant answer. */
async function startBare(url: string, name: string, pipelined: boolean): Promise<Target> {
  const redis = new Redis(url, { enableAutoPipelining: pipelined });
  const app = new Koa();
  app.use(async (ctx) => {
    await redis.get(`graph:${name}`);
    ctx.body = 'ok';
  });
  const { server, port } = await serve(app);
  return {
    name: pipelined ? 'barePipelined' : 'bare',
    url: `http://127.0.0.1:${port}/${name}`,
    headers: {},
    close: async () => {
      await closeGracefully(server, 1000);
      redis.disconnect();
    },
  };
}

interface Summary {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  cpuMicrosPerRequest: number;
}

function summarize(runs: Figures[]): Summary {
  const pickMedian = (pick: (run: Figures) => number, digits: number): number => Number(medianOf(runs.map(pick)).toFixed(digits));
  return {
    requestsPerSecond: pickMedian((run) => run.requestsPerSecond, 0),
    p50Ms: pickMedian((run) => run.p50Ms, 2),
    p99Ms: pickMedian((run) => run.p99Ms, 2),
    cpuMicrosPerRequest: pickMedian((run) => run.cpuMicrosPerRequest ?? 0, 1),
  };
}

async function main(): Promise<void> {
  const url = process.env.REDIS_URL ?? infraEnv().REDIS_URL!;
  const name = `bench-${process.pid}`;
  const targets = [await startRegistry(url, name), await startBare(url, name, false), await startBare(url, name, true)];
  const runs: Record<TargetName, Figures[]> = { registry: [], bare: [], barePipelined: [] };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      for (const target of round % 2 === 0 ? targets : [...targets].reverse()) {
        await load({ url: target.url, headers: target.headers, seconds: WARM_UP_SECONDS, connections: CONNECTIONS });
        const cpuBefore = process.cpuUsage();
        const figures: Figures = await load({ url: target.url, headers: target.headers, seconds: DURATION_SECONDS, connections: CONNECTIONS });
        const cpu = process.cpuUsage(cpuBefore);
        figures.cpuMicrosPerRequest = Number(((cpu.user + cpu.system) / figures.requests).toFixed(1));
        runs[target.name].push(figures);
        process.stdout.write(
          `round ${round + 1} ${target.name}: ${figures.requestsPerSecond} req/s, p50 ${figures.p50Ms} ms, p99 ${figures.p99Ms} ms, ${figures.cpuMicrosPerRequest} µs CPU/request\n`,
        );
      }
    }
  } finally {
    await Promise.all(targets.map((target) => target.close()));
    const redis = new Redis(url);
    await redis.del(`graph:${name}`);
    redis.disconnect();
  }
  const registry = summarize(runs.registry);
  const bare = summarize(runs.bare);
  const barePipelined = summarize(runs.barePipelined);
  const ratioByRound = runs.registry.map((run, round) => Number((run.requestsPerSecond / runs.bare[round]!.requestsPerSecond).toFixed(3)));
  const results = {
    benchmark: 'graph-registry GET /{name} with a valid X-Api-Key',
    date: new Date().toISOString(),
    node: process.version,
    setup: {
      connections: CONNECTIONS,
      warmUpSeconds: WARM_UP_SECONDS,
      durationSeconds: DURATION_SECONDS,
      rounds: ROUNDS,
      summary: 'median of the rounds',
      loadGenerator: 'autocannon in a child process; the servers in the parent process, one at a time under load',
      store: 'the shared test Redis on loopback',
    },
    registry: { ...registry, runs: runs.registry },
    bare: { ...bare, runs: runs.bare },
    barePipelined: { ...barePipelined, runs: runs.barePipelined },
    /**
     * The figure of merit, registry req/s over bare req/s: the median of the rounds' ratios. Within
     * a round the two ran back to back, so under the same conditions; other work on the machine
     * moves whole rounds up or down.
     */
    ratio: Number(medianOf(ratioByRound).toFixed(3)),
    ratioByRound,
    ratioOfMedians: Number((registry.requestsPerSecond / bare.requestsPerSecond).toFixed(3)),
    ratioToBarePipelined: Number((registry.requestsPerSecond / barePipelined.requestsPerSecond).toFixed(3)),
    cpuPerRequestRatio: Number((registry.cpuMicrosPerRequest / bare.cpuMicrosPerRequest).toFixed(3)),
    target: 0.9,
  };
  writeResults('graph-registry', results);
}

await main();
