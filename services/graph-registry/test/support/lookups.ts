import { spawn } from 'node:child_process';

/** The 99th percentile of `values` (nearest rank). */
export function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/** One lookup of another caller: when it was answered (ms since the epoch, sub-ms), how long it took, and its status. */
export interface Lookup {
  endedAt: number;
  ms: number;
  status: number;
}

/** Now, in ms since the epoch with sub-ms precision: comparable between processes of one machine. */
export const now = (): number => performance.timeOrigin + performance.now();

/**
 * Other callers, in a process of their own as they would be: two loops looking up GET /orders
 * over keep-alive connections until stdin closes, then each lookup (see Lookup) as one JSON
 * line. "ready" once the connections are warm.
 */
const CALLERS = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
const { BASE, KEY } = process.env;
const results = [];
let done = false;
const now = () => performance.timeOrigin + performance.now();
const lookup = () => new Promise((resolve) => {
  const started = now();
  const answered = (status) => { const endedAt = now(); resolve({ endedAt, ms: endedAt - started, status }); };
  const req = http.get(BASE + '/orders', { agent, headers: { 'x-api-key': KEY } }, (res) => {
    res.resume();
    res.on('end', () => answered(res.statusCode));
  });
  req.on('error', () => answered(0));
});
const caller = async () => { while (!done) results.push(await lookup()); };
Promise.all([lookup(), lookup()]).then(() => {
  process.stdout.write('ready\\n');
  const running = [caller(), caller()];
  process.stdin.on('end', async () => { done = true; await Promise.all(running); process.stdout.write(JSON.stringify(results) + '\\n'); });
  process.stdin.resume();
});
`;

/** What `lookupsDuring` saw: the answer to the work, when the work ran, and the lookups made meanwhile. */
export interface LookupsDuring<T> {
  result: T;
  /** When the work was started and when it was done (ms since the epoch). */
  startedAt: number;
  endedAt: number;
  lookups: Lookup[];
  lookupsMs: number[];
}

/**
 * Runs `work` while two other callers (another process) look a graph up again and again, with
 * `apiKey`; resolves with the answer to `work`, when it ran, and every lookup made meanwhile.
 * Every lookup must have answered 200.
 */
export async function lookupsDuring<T>(baseUrl: string, apiKey: string, work: () => Promise<T>): Promise<LookupsDuring<T>> {
  const child = spawn(process.execPath, ['-e', CALLERS], { env: { BASE: baseUrl, KEY: apiKey }, stdio: ['pipe', 'pipe', 'inherit'] });
  let output = '';
  child.stdout.setEncoding('utf8');
  const ready = new Promise<void>((resolve) => {
    child.stdout.on('data', (chunk: string) => {
      output += chunk;
      if (output.startsWith('ready\n')) resolve();
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  await ready;
  try {
    const startedAt = now();
    const result = await work();
    const endedAt = now();
    child.stdin.end();
    await exited;
    const lookups = JSON.parse(output.slice('ready\n'.length)) as Lookup[];
    const failed = lookups.filter((lookup) => lookup.status !== 200);
    if (failed.length > 0) throw new Error(`${failed.length} lookups did not answer 200 (first: ${failed[0]!.status})`);
    return { result, startedAt, endedAt, lookups, lookupsMs: lookups.map((lookup) => lookup.ms) };
  } finally {
    child.kill();
  }
}

/**
 * The longest stretch of the work's run in which no lookup was answered, as a share of the run
 * (0 to 1). A request that held the registry's event loop for most of its run leaves the other
 * callers unanswered for most of it (near 1), however fast or busy the machine; a registry that
 * keeps answering leaves only the gaps between two lookups, which grow and shrink with the load
 * as the run itself does. A ratio of two durations measured together, so a busy machine slows
 * both and the verdict stays (issue 40).
 */
export function longestSilenceShare(during: Pick<LookupsDuring<unknown>, 'startedAt' | 'endedAt' | 'lookups'>): number {
  const { startedAt, endedAt } = during;
  const answered = during.lookups.map((lookup) => lookup.endedAt).filter((at) => at > startedAt && at < endedAt).sort((a, b) => a - b);
  let last = startedAt;
  let longest = 0;
  for (const at of [...answered, endedAt]) {
    longest = Math.max(longest, at - last);
    last = at;
  }
  return longest / (endedAt - startedAt);
}

/**
 * The p99 a lookup may have while an expensive request runs: 100 ms, or on a machine so loaded
 * that lookups alone are slower, twice the p99 of lookups during a quiet second measured just
 * before. A target for `make bench` (bench/worst-request.bench.ts), not a test's.
 */
export async function lookupP99Bound(baseUrl: string, apiKey: string): Promise<{ bound: number; quietP99: number }> {
  const { lookupsMs } = await lookupsDuring(baseUrl, apiKey, () => new Promise((resolve) => setTimeout(resolve, 1000)));
  const quietP99 = p99(lookupsMs);
  return { bound: Math.max(100, 2 * quietP99), quietP99 };
}
