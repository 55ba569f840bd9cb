// The cache benchmark's servers and its interleaved Get comparison: the cache service and its
// peers started as child processes, Gets driven on each in rotating rounds, and CPU profiles.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { bufferSerializer, createCacheClient } from '@sp/cache-client';
import { makeUpSettings } from '../../test/support/make-up-settings.ts';
import { npmStart } from '../../test/support/service-process.ts';
import { summarizeProfileDir, type ProfileSummary } from './cpu-profile.ts';
import { drive, freePort, medianOf, startChild, stopChild, type RunFigures } from './stats.ts';

export const CONCURRENCY = 32;
export const KEYS = 1000;
export const VALUE = Buffer.alloc(100, 'v');
export const GET_WARMUP_MS = 1000;

/** Settings of `make up`'s that each benchmark sets itself: the backend and the address. */
const BENCH_OWN = new Set(['Cache__Backend', 'Cache__Host', 'Cache__Port']);

/**
 * The cache service as the chart runs it, and `make up` (whose sizing is the chart's): the
 * settings make up gives it (the chart's default capacity and key partitions, the image's
 * allocator: jemalloc, LD_PRELOAD and MALLOC_CONF) and the chart's heap bound for a 512 MiB
 * container (NODE_OPTIONS, platform-lib's nodeOptions); the command line is `npm start`'s (source
 * maps on, the instrument file imported before main).
 */
export const DEPLOYED_ENV: Record<string, string> = Object.fromEntries(Object.entries(makeUpSettings('cache')).filter(([name]) => !BENCH_OWN.has(name)));
export const DEPLOYED_NODE_OPTIONS = ['--max-old-space-size=320', '--max-semi-space-size=8'];
/** grpc-js serving the proto with handlers that answer a constant: the framework's ceiling. */
export const bareServer = fileURLToPath(new URL('./bare-cache-server.ts', import.meta.url));
/** Get and Set by hand on node:http2 with protobufjs, no gRPC library: the floor of a Node server. */
export const rawHttp2Server = fileURLToPath(new URL('./raw-http2-cache-server.ts', import.meta.url));

export const load = (): number => Number(loadavg()[0]!.toFixed(2));

export interface Server {
  address: string;
  pid: number;
  stop: () => Promise<void>;
  /** What the process printed on stdout since it listened (a service started with `captureOutput`). */
  output?: () => string;
}

/** How a variant of the deployed service differs (the `deployment` part of the benchmark): no heap bound, or `dist/main.js` alone. */
export interface ServiceVariant {
  /** Replaces DEPLOYED_NODE_OPTIONS (the chart's heap bound). */
  heapOptions?: string[];
  /** `node dist/main.js` instead of npm start's command line (no instrument file, no source maps). */
  mainAlone?: boolean;
  /** `--enable-source-maps` on (true) or off (false) whatever npm start's command line says. */
  sourceMaps?: boolean;
  /** Variables of DEPLOYED_ENV left out (to compare a setting of the chart's environment with its absence). */
  withoutEnv?: string[];
  /** Keeps what the process prints on stdout (Server.output), e.g. `--trace-gc-nvp` lines. */
  captureOutput?: boolean;
}

const SOURCE_MAPS = '--enable-source-maps';

/** npm start's arguments with `--enable-source-maps` as the variant wants it (unchanged when it does not say). */
function withSourceMaps(args: string[], sourceMaps: boolean | undefined): string[] {
  if (sourceMaps === undefined) return args;
  const rest = args.filter((arg) => arg !== SOURCE_MAPS);
  return sourceMaps ? [SOURCE_MAPS, ...rest] : rest;
}

/** The cache service as deployed (DEPLOYED_ENV, then `env`), with `nodeOptions` (profiling) added to the deployed ones. */
export async function startCacheService(env: Record<string, string>, nodeOptions: string[] = [], variant: ServiceVariant = {}): Promise<Server> {
  const port = await freePort();
  const { cwd, args } = npmStart('cache');
  const deployedEnv = Object.fromEntries(Object.entries(DEPLOYED_ENV).filter(([name]) => !(variant.withoutEnv ?? []).includes(name)));
  const child = await startChild(
    process.execPath,
    [...(variant.heapOptions ?? DEPLOYED_NODE_OPTIONS), ...nodeOptions, ...(variant.mainAlone === true ? ['dist/main.js'] : withSourceMaps(args, variant.sourceMaps))],
    { ...deployedEnv, Cache__Port: String(port), Cache__Host: '127.0.0.1', Management__Port: String(await freePort()), ...env },
    /listening/,
    cwd,
  );
  let printed = '';
  if (variant.captureOutput === true) child.stdout!.on('data', (chunk: Buffer) => (printed += chunk.toString()));
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child), pid: child.pid!, output: () => printed };
}

/** A peer server: `command` listens on 127.0.0.1:$PORT and prints `listening`. */
export async function startPeer(command: string, args: string[] = []): Promise<Server> {
  const port = await freePort();
  const child = await startChild(command, args, { PORT: String(port) }, /listening/);
  return { address: `127.0.0.1:${port}`, stop: () => stopChild(child), pid: child.pid! };
}

/** The grpc-go peer, built (once, cached under .cache) by bench/lib/go-peer.sh. */
export function buildGoPeer(): string {
  const script = fileURLToPath(new URL('./go-peer.sh', import.meta.url));
  return execFileSync('bash', [script], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
}

/** One round of the Get comparison: each target's figures by its name. */
export type GetRound = Record<string, RunFigures>;

/**
 * Get, one call each, on every target in each of `rounds` rounds of `durationMs` (the order
 * rotates, so none is always first after a pause); the targets' keys are filled first. Answers
 * each round's figures by target and the 1-minute load average when the round ended.
 */
export async function getRounds(targets: ReadonlyArray<Server & { name: string }>, rounds: number, durationMs: number): Promise<{ rounds: GetRound[]; loadAverages: number[] }> {
  const clients = targets.map((target) => createCacheClient<Buffer>({ address: target.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer));
  for (const client of clients) for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
  const results: GetRound[] = [];
  const loadAverages: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const figures: GetRound = {};
    for (let k = 0; k < targets.length; k++) {
      const index = (r + k) % targets.length;
      const client = clients[index]!;
      figures[targets[index]!.name] = await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, durationMs, targets[index]!.pid, GET_WARMUP_MS);
    }
    results.push(figures);
    loadAverages.push(load());
  }
  clients.forEach((client) => client.close());
  return { rounds: results, loadAverages };
}

export interface RatioRange {
  median: number;
  min: number;
  max: number;
}

const rounded = (value: number): number => Number(value.toFixed(3));

/** The median, lowest and highest over the rounds of `a`'s figure divided by `b`'s in the same round. */
export function roundRatios(rounds: GetRound[], a: string, b: string, figure: (run: RunFigures) => number): RatioRange {
  const ratios = rounds.map((round) => figure(round[a]!) / figure(round[b]!));
  return { median: rounded(medianOf(ratios)), min: rounded(Math.min(...ratios)), max: rounded(Math.max(...ratios)) };
}

/**
 * A server started by `start` under `node --cpu-prof`, loaded with Gets for `durationMs`,
 * stopped: the top frames of the load alone (what it sampled before the warm-up ended is left out).
 */
export async function profileGets(start: (nodeOptions: string[]) => Promise<Server>, durationMs: number): Promise<ProfileSummary> {
  const dir = mkdtempSync(join(tmpdir(), 'cache-bench-profile-'));
  try {
    const spawned = performance.now();
    const server = await start(['--cpu-prof', `--cpu-prof-dir=${dir}`]);
    const client = createCacheClient<Buffer>({ address: server.address, deadlineMs: 5000, retries: 0, coalesce: false }, bufferSerializer);
    for (let i = 0; i < KEYS; i++) await client.set(`key-${i}`, VALUE);
    const loadedAfterMs = performance.now() - spawned + GET_WARMUP_MS;
    await drive((i) => client.get(`key-${i % KEYS}`), CONCURRENCY, durationMs, server.pid, GET_WARMUP_MS);
    client.close();
    await server.stop();
    return summarizeProfileDir(dir, 25, loadedAfterMs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
