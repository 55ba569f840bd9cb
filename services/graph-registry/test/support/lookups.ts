import { spawn } from 'node:child_process';
import { API_KEY } from './registry-fixture.js';

/** The 99th percentile of `values` (nearest rank). */
export function p99(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil(sorted.length * 0.99) - 1)]!;
}

/**
 * Other callers, in a process of their own as they would be: two loops looking up GET /orders
 * over keep-alive connections until stdin closes, then the duration (ms) and status of each
 * lookup as one JSON line. "ready" once the connections are warm.
 */
const CALLERS = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
const { BASE, KEY } = process.env;
const results = [];
let done = false;
const lookup = () => new Promise((resolve) => {
  const started = performance.now();
  const req = http.get(BASE + '/orders', { agent, headers: { 'x-api-key': KEY } }, (res) => {
    res.resume();
    res.on('end', () => resolve({ ms: performance.now() - started, status: res.statusCode }));
  });
  req.on('error', () => resolve({ ms: performance.now() - started, status: 0 }));
});
const caller = async () => { while (!done) results.push(await lookup()); };
Promise.all([lookup(), lookup()]).then(() => {
  process.stdout.write('ready\\n');
  const running = [caller(), caller()];
  process.stdin.on('end', async () => { done = true; await Promise.all(running); process.stdout.write(JSON.stringify(results) + '\\n'); });
  process.stdin.resume();
});
`;

/**
 * Runs `work` while two other callers (another process) look a graph up again and again;
 * resolves with the answer to `work` and the duration of every lookup made while it ran. Every
 * lookup must have answered 200.
 */
export async function lookupsDuring<T>(baseUrl: string, work: () => Promise<T>): Promise<{ result: T; lookupsMs: number[] }> {
  const child = spawn(process.execPath, ['-e', CALLERS], { env: { BASE: baseUrl, KEY: API_KEY }, stdio: ['pipe', 'pipe', 'inherit'] });
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
    const result = await work();
    child.stdin.end();
    await exited;
    const lookups = JSON.parse(output.slice('ready\n'.length)) as Array<{ ms: number; status: number }>;
    const failed = lookups.filter((lookup) => lookup.status !== 200);
    if (failed.length > 0) throw new Error(`${failed.length} lookups did not answer 200 (first: ${failed[0]!.status})`);
    return { result, lookupsMs: lookups.map((lookup) => lookup.ms) };
  } finally {
    child.kill();
  }
}

/**
 * The p99 a lookup may have while an expensive request runs: 100 ms, or on a machine so loaded
 * that lookups alone are slower, twice the p99 of lookups during a quiet second measured just
 * before (a request that holds the event loop makes lookups wait for seconds either way).
 */
export async function lookupP99Bound(baseUrl: string): Promise<{ bound: number; quietP99: number }> {
  const { lookupsMs } = await lookupsDuring(baseUrl, () => new Promise((resolve) => setTimeout(resolve, 1000)));
  const quietP99 = p99(lookupsMs);
  return { bound: Math.max(100, 2 * quietP99), quietP99 };
}
