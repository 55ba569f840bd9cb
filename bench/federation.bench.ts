// make bench: the graph registry's federation (issue 44). Three figures, against the registry as
// main.ts wires it (built code: @sp/graph-registry's dist) in this process, on a database of the
// shared Redis of its own; load (autocannon) from a child process, so it shares no event loop:
//  1. composition time at 10, 50 and 200 subgraphs: the time of a subgraph publish that composes
//     them all (median of PUBLISHES_EACH publishes of a changed SDL at each size), growth per subgraph;
//  2. `GET /{name}` p99 while 200-subgraph compositions run back to back (publishes in a loop) against
//     the same quiet: composition runs in the schema worker, never on the event loop;
//  3. artifact reads per second on the 304 path (`If-None-Match` naming the supergraph's ETag,
//     `X-Hive-CDN-Key`: what every polling gateway does) against a bare Koa server answering 304.
// Results: bench/results/federation.json.
import { createServer, type Server } from 'node:http';
import Koa from 'koa';
import { Redis } from 'ioredis';
import { createLogger, createRegistry } from '@sp/observability';
import { closeGracefully, listen, requestListener } from '@sp/http';
import { createGraphRegistryApp, createGraphStore } from '@sp/graph-registry';
import { load, medianOf, type LoadFigures } from './lib/http-load.ts';
import { infraEnv, writeResults } from './lib/stats.ts';
import { subgraphSdl } from './lib/subgraph-sdl.ts';

const SIZES = [10, 50, 200] as const;
const PUBLISHES_EACH = Number(process.env.BENCH_PUBLISHES ?? 5);
const CONNECTIONS = 32;
const WARM_UP_SECONDS = 2;
const DURATION_SECONDS = Number(process.env.BENCH_SECONDS ?? 8);
const API_KEY = 'bench-key-0123456789abcdef0123456789';
const CDN_KEY = 'bench-cdn-key-0123456789abcdef0123';
/** A Redis database of this benchmark's own: the registry's keys have fixed names. */
const DATABASE = 14;

interface Registry {
  base: string;
  close(): Promise<void>;
}

async function startRegistry(storeUrl: string): Promise<Registry> {
  const logger = createLogger({ service: 'graph-registry', level: 'silent' });
  const store = createGraphStore({ kind: 'redis', url: storeUrl }, logger);
  const app = createGraphRegistryApp({ store, apiKeys: [API_KEY], logger, registry: createRegistry('graph-registry'), cdn: { keys: [CDN_KEY], target: 'default' } });
  const server = createServer(requestListener(app));
  const port = await listen(server, 0, '127.0.0.1');
  return {
    base: `http://127.0.0.1:${port}`,
    close: async () => {
      await closeGracefully(server, 1000);
      await store.close();
    },
  };
}

/** Publishes subgraph i (its URL first, once); the time of the publish (its composition) in ms. */
async function publish(registry: Registry, i: number, revision: number): Promise<number> {
  const headers = { 'x-api-key': API_KEY };
  if (revision === 0) {
    const registered = await fetch(`${registry.base}/sub${i}`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: `http://sub${i}.bench.svc:4000/graphql` });
    if (registered.status !== 204) throw new Error(`POST /sub${i} answered ${registered.status}`);
  }
  const started = performance.now();
  const answer = await fetch(`${registry.base}/sub${i}/schema`, { method: 'POST', headers: { ...headers, 'content-type': 'application/graphql' }, body: subgraphSdl(i, { revision }) });
  const elapsed = performance.now() - started;
  if (answer.status !== 201) throw new Error(`POST /sub${i}/schema answered ${answer.status} ${await answer.text()}`);
  return elapsed;
}

type SizeResult = { medianMs: number; runsMs: number[] } | { error: string; publishedBefore: number };

/**
 * Publishes subgraphs up to each size; at each, PUBLISHES_EACH more of the last one, timed. A
 * publish refused (past the composition budget) ends the growth: recorded, not thrown.
 */
async function compositionTimes(registry: Registry): Promise<{ times: Record<number, SizeResult>; largest: number }> {
  const times: Record<number, SizeResult> = {};
  let published = 0;
  /** The largest size measured: the lookups run while it composes again (a larger one may be past the budget). */
  let largest = 0;
  for (const size of SIZES) {
    try {
      while (published < size) await publish(registry, published + 1, 0).then(() => (published += 1));
      const runsMs: number[] = [];
      for (let revision = 1; revision <= PUBLISHES_EACH; revision++) runsMs.push(Number((await publish(registry, size, revision)).toFixed(1)));
      times[size] = { medianMs: medianOf(runsMs), runsMs };
      largest = size;
      process.stdout.write(`composition of ${size} subgraphs: median ${medianOf(runsMs)} ms (${runsMs.join(', ')})\n`);
    } catch (err) {
      times[size] = { error: (err as Error).message, publishedBefore: published };
      process.stdout.write(`composition of ${size} subgraphs: refused after ${published}: ${(err as Error).message}\n`);
      break;
    }
  }
  return { times, largest };
}

/** GET /{name} under load, quiet and while 200-subgraph compositions run back to back. */
async function lookupsDuringComposition(registry: Registry, largest: number): Promise<{ quiet: LoadFigures; composing: LoadFigures; compositionsDuringLoad: number; refusedDuringLoad: number }> {
  const request = { url: `${registry.base}/sub1`, headers: { 'x-api-key': API_KEY }, seconds: DURATION_SECONDS, connections: CONNECTIONS };
  await load({ ...request, seconds: WARM_UP_SECONDS });
  const quiet = await load(request);
  let running = true;
  let compositions = 0;
  let refused = 0;
  let revision = 100;
  const composer = (async () => {
    while (running) {
      // Every published subgraph is composed (the refused one included, which is past the budget: 422).
      await publish(registry, largest, ++revision).then(
        () => (compositions += 1),
        () => (refused += 1),
      );
    }
  })();
  const composing = await load(request);
  running = false;
  await composer;
  process.stdout.write(`GET /{name} p99: quiet ${quiet.p99Ms} ms, during ${compositions} compositions (${refused} refused past the budget) ${composing.p99Ms} ms\n`);
  return { quiet, composing, compositionsDuringLoad: compositions, refusedDuringLoad: refused };
}

/** The ceiling of the 304 path: Koa answering 304 to every request, nothing read. */
async function startBare304(): Promise<{ url: string; server: Server }> {
  const app = new Koa();
  app.use((ctx) => {
    ctx.set('ETag', '"bench"');
    ctx.status = 304;
  });
  const server = createServer(requestListener(app));
  return { url: `http://127.0.0.1:${await listen(server, 0, '127.0.0.1')}/supergraph`, server };
}

async function notModifiedReads(registry: Registry): Promise<{ registry: LoadFigures; bare: LoadFigures }> {
  const url = `${registry.base}/artifacts/v1/default/supergraph`;
  const first = await fetch(url, { headers: { 'x-hive-cdn-key': CDN_KEY } });
  const etag = first.headers.get('etag');
  await first.arrayBuffer();
  if (first.status !== 200 || etag === null) throw new Error(`GET ${url} answered ${first.status} without an ETag`);
  const headers = { 'x-hive-cdn-key': CDN_KEY, 'if-none-match': etag };
  const bare = await startBare304();
  try {
    const figures = { registry: [] as LoadFigures[], bare: [] as LoadFigures[] };
    // Two rounds, alternating the order, to cancel drift.
    for (const order of [['registry', 'bare'], ['bare', 'registry']] as const) {
      for (const target of order) {
        const request = target === 'registry' ? { url, headers } : { url: bare.url, headers: { 'if-none-match': '"bench"' } };
        await load({ ...request, seconds: WARM_UP_SECONDS, connections: CONNECTIONS, expectStatus: 304 });
        figures[target].push(await load({ ...request, seconds: DURATION_SECONDS, connections: CONNECTIONS, expectStatus: 304 }));
      }
    }
    const best = (runs: LoadFigures[]): LoadFigures => runs.reduce((a, b) => (a.requestsPerSecond >= b.requestsPerSecond ? a : b));
    process.stdout.write(`304 reads/s: registry ${best(figures.registry).requestsPerSecond}, bare ${best(figures.bare).requestsPerSecond}\n`);
    return { registry: best(figures.registry), bare: best(figures.bare) };
  } finally {
    await closeGracefully(bare.server, 1000);
  }
}

async function main(): Promise<void> {
  const redisUrl = (process.env.REDIS_URL ?? infraEnv().REDIS_URL!).replace(/\/\d*$/, '');
  const storeUrl = `${redisUrl}/${DATABASE}`;
  const redis = new Redis(storeUrl);
  await redis.flushdb();
  const registry = await startRegistry(storeUrl);
  try {
    const composition = await compositionTimes(registry);
    const lookups = await lookupsDuringComposition(registry, composition.largest);
    const reads = await notModifiedReads(registry);
    const median = (size: number): number | undefined => { const r = composition.times[size]; return r !== undefined && 'medianMs' in r ? r.medianMs : undefined; };
    const [small, large] = [median(SIZES[0]), median(SIZES[2])];
    writeResults('federation', {
      benchmark: 'graph-registry federation: composition time, lookups during composition, 304 artifact reads',
      date: new Date().toISOString(),
      node: process.version,
      setup: {
        sizes: SIZES,
        publishesEach: PUBLISHES_EACH,
        connections: CONNECTIONS,
        durationSeconds: DURATION_SECONDS,
        subgraph: 'an entity of its own with a root field and a filter input, and a field on one entity all subgraphs share',
        loadGenerator: 'autocannon in a child process; the registry in the parent, its schema worker a thread of it',
        store: `the shared test Redis, database ${DATABASE}`,
      },
      composition: composition.times,
      /** ms per subgraph between 10 and 200, and 200 subgraphs' time over 20 times 10's (1: linear); null when 200 did not compose within the budget. */
      growth: small === undefined || large === undefined ? null : { msPerSubgraph: Number(((large - small) / (SIZES[2] - SIZES[0])).toFixed(2)), ratioToLinear: Number((large / (small * (SIZES[2] / SIZES[0]))).toFixed(3)) },
      lookupsComposedSubgraphs: composition.largest,
      lookups: { ...lookups, p99IncreaseMs: Number((lookups.composing.p99Ms - lookups.quiet.p99Ms).toFixed(2)), target: 'within 100 ms of quiet' },
      notModified: { ...reads, ratio: Number((reads.registry.requestsPerSecond / reads.bare.requestsPerSecond).toFixed(3)) },
    });
  } finally {
    await registry.close();
    await redis.flushdb();
    redis.disconnect();
  }
}

await main();
