// Shared helpers for the benchmarks: latency percentiles, child processes, result files.
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';

export interface RunFigures {
  opsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  calls: number;
  errors: number;
  /** CPU time the server process spent per operation (user + system), when its pid was given. */
  serverCpuMicrosPerOp?: number;
  /** CPU time this process (the caller: client library and load loop) spent per operation. */
  clientCpuMicrosPerOp?: number;
}

/** User + system CPU time of a process so far, in microseconds (from /proc, 10 ms resolution). */
export function cpuMicros(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
}

/** User + system CPU time of a process and all its descendants (a launcher script and its JVM), in microseconds. */
export function treeCpuMicros(pid: number): number {
  let children: number[] = [];
  try {
    children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return 0;
  }
  return cpuMicros(pid) + children.reduce((sum, child) => sum + treeCpuMicros(child), 0);
}

/** The pid a test/infra script recorded for a shared dependency (.cache/run/<name>.pid), if it runs. */
export function infraPid(name: string): number | undefined {
  try {
    return Number(readFileSync(new URL(`../../.cache/run/${name}.pid`, import.meta.url), 'utf8').trim());
  } catch {
    return undefined;
  }
}

export function percentile(sortedMs: Float64Array, p: number): number {
  if (sortedMs.length === 0) return 0;
  const index = Math.min(sortedMs.length - 1, Math.floor((p / 100) * sortedMs.length));
  return Number(sortedMs[index]!.toFixed(3));
}

/**
 * Keeps `concurrency` calls in flight for `durationMs` after a warm-up, and measures each.
 * `call` resolves when one operation completed.
 */
export async function drive(call: (i: number) => Promise<unknown>, concurrency: number, durationMs: number, serverPid?: number, warmupMs = 1500): Promise<RunFigures> {
  const latencies: number[] = [];
  let errors = 0;
  let measuring = false;
  let stop = false;
  let counter = 0;
  const worker = async (): Promise<void> => {
    while (!stop) {
      const started = process.hrtime.bigint();
      try {
        await call(counter++);
        if (measuring) latencies.push(Number(process.hrtime.bigint() - started) / 1e6);
      } catch {
        if (measuring) errors++;
      }
    }
  };
  const workers = Array.from({ length: concurrency }, () => worker());
  await new Promise((resolve) => setTimeout(resolve, warmupMs));
  measuring = true;
  const startedAt = performance.now();
  const cpuAtStart = serverPid === undefined ? 0 : cpuMicros(serverPid);
  const ownCpuAtStart = process.cpuUsage();
  await new Promise((resolve) => setTimeout(resolve, durationMs));
  measuring = false;
  const ownCpu = process.cpuUsage(ownCpuAtStart);
  const cpuUsed = serverPid === undefined ? undefined : cpuMicros(serverPid) - cpuAtStart;
  const elapsed = (performance.now() - startedAt) / 1000;
  stop = true;
  await Promise.all(workers);
  const sorted = Float64Array.from(latencies).sort();
  const figures: RunFigures = {
    opsPerSecond: Math.round(latencies.length / elapsed),
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    calls: latencies.length,
    errors,
    clientCpuMicrosPerOp: Number(((ownCpu.user + ownCpu.system) / Math.max(1, latencies.length)).toFixed(1)),
  };
  if (cpuUsed !== undefined) figures.serverCpuMicrosPerOp = Number((cpuUsed / Math.max(1, latencies.length)).toFixed(1));
  return figures;
}

/** The round with the median throughput, so one disturbed round does not decide. */
export function median(runs: RunFigures[]): RunFigures {
  return [...runs].sort((a, b) => a.opsPerSecond - b.opsPerSecond)[Math.floor(runs.length / 2)]!;
}

export { freePort } from '../../test/support/free-port.ts';

/** The median of some numbers (the lower middle one of an even count). */
export function medianOf(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)]!;
}

/** Starts a child process (in `cwd`, default this one's) and resolves once it printed `marker` on stdout. */
export async function startChild(command: string, args: string[], env: NodeJS.ProcessEnv, marker: RegExp, cwd?: string): Promise<ChildProcess> {
  const child = spawn(command, args, { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'], cwd });
  let seen = '';
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`${command} ${args.join(' ')} exited with ${code}: ${seen.slice(-2000)}`)));
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (marker.test(seen)) resolve();
    });
  });
  child.removeAllListeners('exit');
  child.stdout.resume();
  return child;
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}

export function rssBytes(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return match ? Number(match[1]) * 1024 : 0;
}

/** The local dependencies' addresses, from the file test/infra writes. */
export function infraEnv(): Record<string, string> {
  const text = readFileSync(new URL('../../.cache/run/infra.env', import.meta.url), 'utf8');
  return Object.fromEntries(text.split('\n').filter((line) => line.includes('=')).map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]));
}

export function writeResults(name: string, results: unknown): void {
  const dir = new URL('../results/', import.meta.url);
  mkdirSync(dir, { recursive: true });
  writeFileSync(new URL(`${name}.json`, dir), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\nwritten to bench/results/${name}.json\n`);
}
