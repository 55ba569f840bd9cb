// HTTP load for the benchmarks: one autocannon run in a child process of its own (this file,
// forked), so the load generator never shares an event loop with the servers it measures: the
// machine has 2 cores, one for the servers and one for the load.
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { cpus, loadavg } from 'node:os';

export interface LoadRequest {
  url: string;
  headers: Record<string, string>;
  seconds: number;
  connections: number;
  /** The status every answer must have; a 2xx one by default (e.g. 304 for conditional reads). */
  expectStatus?: number;
}

export interface LoadFigures {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  non2xx: number;
  errors: number;
  /** With LoadRequest.expectStatus: answers with another status. */
  unexpected?: number;
}

/** One autocannon run against the URL; rejects when any answer was not 2xx or failed. */
export async function load(request: LoadRequest): Promise<LoadFigures> {
  const child = fork(fileURLToPath(import.meta.url), [JSON.stringify(request)], { stdio: 'inherit' });
  const [figures] = (await once(child, 'message')) as [LoadFigures];
  await once(child, 'exit');
  if (request.expectStatus !== undefined) {
    if (figures.errors > 0 || (figures.unexpected ?? 0) > 0) throw new Error(`${request.url}: ${figures.unexpected} answers other than ${request.expectStatus}, ${figures.errors} errors`);
  } else if (figures.non2xx > 0 || figures.errors > 0) throw new Error(`${request.url}: ${figures.non2xx} non-2xx answers, ${figures.errors} errors`);
  return figures;
}

/** The middle value (the mean of the two middle ones for an even count). */
export function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

// The child's side: run the load and send the figures back to the parent.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const request = JSON.parse(process.argv[2]!) as LoadRequest;
  let unexpected = 0;
  const result = await new Promise<autocannon.Result>((resolve, reject) => {
    const options = { url: request.url, headers: request.headers, connections: request.connections, duration: request.seconds };
    const instance = autocannon(options, (err: unknown, done: autocannon.Result) => (err ? reject(err instanceof Error ? err : new Error('autocannon failed')) : resolve(done)));
    if (request.expectStatus !== undefined) instance.on('response', (_client, statusCode) => void (statusCode === request.expectStatus || (unexpected += 1)));
  });
  const figures: LoadFigures = {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors,
    unexpected,
  };
  process.send!(figures);
}

/**
 * What every interleaved-rounds HTTP bench's results file opens with: what it measured, when, on
 * which machine (cores, Node, load average), and the round settings its medians come from.
 */
export function roundsHeader(benchmark: string, rounds: { connections: number; warmUpSeconds: number; durationSeconds: number; rounds: number }): Record<string, unknown> & { setup: Record<string, unknown> } {
  return {
    benchmark,
    date: new Date().toISOString(),
    machine: { cpus: cpus().length, node: process.version, loadAverage: loadavg().map((value) => Number(value.toFixed(2))) },
    setup: { ...rounds, summary: 'median of interleaved rounds (the order alternates)' },
  };
}
