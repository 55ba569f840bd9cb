// make bench: the cache service's Get and Set over loopback against the framework's ceiling (a bare
// @grpc/grpc-js server with the same proto answering a constant) and redis-benchmark at the same
// concurrency, plus the memory backend's footprint with 1,000,000 entries of 100 bytes.
// Each server runs in its own process; the load comes from this one. Results: bench/results/cache.json.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { drive, freePort, infraEnv, rssBytes, startChild, stopChild, writeResults, type RunFigures } from './lib/stats.ts';

const CONCURRENCY = 32;
const DURATION_MS = 8000;
const KEYS = 1000;
const VALUE = Buffer.alloc(100, 'v');
const ENTRIES = 1_000_000;

const cacheMain = fileURLToPath(new URL('../services/cache/dist/main.js', import.meta.url));
const bareServer = fileURLToPath(new URL('./lib/bare-cache-server.ts', import.meta.url));

async function startCacheService(env: Record<string, string>): Promise<{ address: string; stop: () => Promise<void>; pid: number }> {
  const port = await freePort();
  const child = await startChild(
    process.execPath,
    [cacheMain],
    { Cache__Port: String(port), Cache__Host: '127.0.0.1', Management__Port: String(await freePort()), ...env },
    /listening/,
  );
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child), pid: child.pid! };
}

async function startBare(): Promise<{ address: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = await startChild(process.execPath, [bareServer], { PORT: String(port) }, /listening/);
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child) };
}

async function getAndSet(address: string): Promise<{ get: RunFigures; set: RunFigures }> {
  const client = createCacheClient<Buffer>({ address, deadlineMs: 5000, retries: 0 }, bufferSerializer);
  for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
  const get = await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, DURATION_MS);
  const set = await drive((i) => client.set(`key-${i % KEYS}`, VALUE), CONCURRENCY, DURATION_MS);
  client.close();
  return { get, set };
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
  const service = await startCacheService({ Cache__Backend: 'memory', Cache__Capacity: String(ENTRIES) });
  const client = createCacheClient<Buffer>({ address: service.address, deadlineMs: 10_000 }, bufferSerializer);
  await client.get('warm-up');
  const before = rssBytes(service.pid);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < ENTRIES) {
      const i = next++;
      await client.set(`entry-${i.toString().padStart(7, '0')}`, Buffer.alloc(100, i % 256));
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: 64 }, () => worker()));
  const fillSeconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, 2000));
  const after = rssBytes(service.pid);
  const stillThere = await client.get('entry-0000000');
  client.close();
  await service.stop();
  if (stillThere?.length !== 100) throw new Error('the first entry was evicted: capacity not honoured');
  return { entries: ENTRIES, valueBytes: 100, rssBeforeBytes: before, rssAfterBytes: after, rssAfterMiB: Math.round(after / 2 ** 20), bytesPerEntry: Math.round((after - before) / ENTRIES), fillSeconds: Number(fillSeconds.toFixed(1)) };
}

const ratio = (a: number, b: number): number => Number((a / b).toFixed(3));

const redisUrl = infraEnv().REDIS_URL!;
const bare = await startBare();
const bareFigures = await getAndSet(bare.address);
await bare.stop();

const memory = await startCacheService({ Cache__Backend: 'memory' });
const memoryFigures = await getAndSet(memory.address);
await memory.stop();

const redis = await startCacheService({ Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: 'bench:' });
const redisFigures = await getAndSet(redis.address);
await redis.stop();

const redisBench = redisBenchmark(redisUrl);
const footprint = await memoryFootprint();

writeResults('cache', {
  date: new Date().toISOString(),
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  setup: { concurrency: CONCURRENCY, durationMs: DURATION_MS, valueBytes: VALUE.length, keys: KEYS, loadGenerator: 'this process (one @grpc/grpc-js channel); each server in its own process' },
  bareGrpcServer: bareFigures,
  memoryBackend: memoryFigures,
  redisBackend: redisFigures,
  redisBenchmark: redisBench,
  ratios: {
    memoryGetVsBare: ratio(memoryFigures.get.opsPerSecond, bareFigures.get.opsPerSecond),
    memorySetVsBare: ratio(memoryFigures.set.opsPerSecond, bareFigures.set.opsPerSecond),
    redisGetVsBare: ratio(redisFigures.get.opsPerSecond, bareFigures.get.opsPerSecond),
    redisSetVsBare: ratio(redisFigures.set.opsPerSecond, bareFigures.set.opsPerSecond),
  },
  targets: { memoryVsBare: 0.9, redisVsBare: 0.7, memoryFootprintMaxMiB: 400 },
  memoryFootprint: footprint,
});
