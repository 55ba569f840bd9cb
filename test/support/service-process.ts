// A service as a child process, as its container runs it: `node <args>` in its folder with only the
// environment it is given. The one way the tests start a service's build (the end-to-end platform,
// the deploy checks, the worst-request checks, the controller's and auth's multi-process tests).
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { eventually } from './eventually.js';
import { processProgress, STALL_MS } from './progress.js';

const servicesDir = fileURLToPath(new URL('../../services/', import.meta.url));

export interface ServiceLaunch {
  /** In messages and the log file's name. */
  name: string;
  cwd: string;
  /** Arguments after `node`. */
  args: readonly string[];
  /** Its settings: besides them the child gets only PATH, HOME, TMPDIR, LANG and TZ of ours (no NODE_ENV=test, no JEST_*). */
  env: Record<string, string>;
  /**
   * How long the start may go without progress (default STALL_MS): it may take as long as the
   * machine needs while the process uses CPU, writes lines or its /readyz answer changes
   * (progress.ts); its exit fails the start at once.
   */
  stallMs?: number;
  /** Wait until /readyz on the management port answers 200, not only for the start log line. */
  ready?: boolean;
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  name: string;
  pid: number;
  /** From its start log line: the API port (undefined for the controller, which serves none) and the management port. */
  port: number | undefined;
  managementPort: number;
  /** Every line it wrote to stdout and stderr, so far. */
  readonly output: readonly string[];
  /** The same, in a file that outlives the test (one temporary folder per test process). */
  logFile: string;
  /** The last lines it wrote. */
  logTail(lines?: number): string;
  /** Set once the process has exited. */
  readonly exit: ServiceExit | undefined;
  /** GET on the management port. */
  management(path: string, timeoutMs?: number): Promise<{ status: number; body: string }>;
  /** SIGTERM, then SIGKILL past `graceMs` (0: SIGKILL at once); resolves with how it exited. */
  stop(graceMs?: number): Promise<ServiceExit>;
}

/** Where `npm start` runs services/<name> and its arguments after `node` (package.json scripts.start). */
export function npmStart(service: string): { cwd: string; args: string[] } {
  const cwd = join(servicesDir, service);
  const pkg = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { scripts?: { start?: string } };
  const [node, ...args] = (pkg.scripts?.start ?? '').split(/\s+/);
  if (node !== 'node') throw new Error(`services/${service}: the start script does not run node: ${pkg.scripts?.start}`);
  return { cwd, args };
}

let logDir: string | undefined;
const logFiles = new Map<string, number>();
function logPath(name: string): string {
  logDir ??= mkdtempSync(join(tmpdir(), 'sp-services-'));
  const count = logFiles.get(name) ?? 0;
  logFiles.set(name, count + 1);
  return join(logDir, `${name}${count === 0 ? '' : `-${count}`}.log`);
}

function childEnv(settings: Record<string, string>): Record<string, string> {
  const inherited = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
  return { ...inherited, ...settings };
}

/** Every line of stdout and stderr into `output` and the log file; `onLine` sees each. */
function capture(child: ChildProcess, logFile: string, output: string[], onLine: (line: string) => void): void {
  const file = createWriteStream(logFile);
  let open = 2;
  for (const stream of [child.stdout!, child.stderr!]) {
    let rest = '';
    stream.setEncoding('utf8');
    stream.on('data', (chunk: string) => {
      file.write(chunk);
      const lines = (rest + chunk).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines.filter((candidate) => candidate.trim() !== '')) {
        output.push(line);
        onLine(line);
      }
    });
    stream.on('end', () => {
      if (rest.trim() !== '') output.push(rest);
      if (--open === 0) file.end();
    });
  }
}

/** The ports of a start log line: the JSON line that carries `managementPort`. */
function startLine(line: string): { port: number | undefined; managementPort: number } | undefined {
  try {
    const record = JSON.parse(line) as { managementPort?: unknown; port?: unknown };
    if (typeof record.managementPort !== 'number') return undefined;
    return { port: typeof record.port === 'number' ? record.port : undefined, managementPort: record.managementPort };
  } catch {
    return undefined; // not a JSON log line (e.g. a Node warning)
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

type Ports = { port: number | undefined; managementPort: number };
type Readyz = { status: number; body: string };

/**
 * Waits for the start line (its ports) and, when asked, /readyz 200, for as long as the process
 * makes progress: uses CPU, writes lines, or answers /readyz differently. Resolves with the ports,
 * or with what went wrong.
 */
async function awaitStart(
  launch: ServiceLaunch,
  child: { pid: number | undefined; exit: () => ServiceExit | undefined; ports: () => Ports | undefined; lines: () => number },
): Promise<{ ports: Ports } | { problem: string }> {
  let readyz: Readyz | undefined;
  const started = async (): Promise<Ports | undefined> => {
    const ports = child.ports();
    if (ports === undefined) throw new Error('no start line yet');
    if (launch.ready !== true) return ports;
    readyz = await fetch(`http://127.0.0.1:${ports.managementPort}/readyz`, { signal: AbortSignal.timeout(2000) }).then(
      async (response) => ({ status: response.status, body: await response.text() }),
      (err: unknown) => ({ status: 0, body: (err as Error).message }),
    );
    if (readyz.status === 200) return ports;
    throw new Error(`readyz: ${readyz.status} ${readyz.body}`);
  };
  const gone = (): string | undefined => {
    const exit = child.exit();
    return exit === undefined ? undefined : `exited ${child.ports() === undefined ? 'before it listened' : 'during start'} (${JSON.stringify(exit)})`;
  };
  try {
    const progress = processProgress(child.pid, child.lines, () => readyz);
    return { ports: await eventually(started, { progress, stallMs: launch.stallMs ?? STALL_MS, gone }, `${launch.name} started`) };
  } catch (err) {
    if (child.exit() !== undefined) await sleep(50); // its last lines, still in the pipes
    return { problem: (err as Error).message };
  }
}

/**
 * Starts the service and waits for its start log line, which carries its ports (so it may listen
 * on port 0), and with `ready` for /readyz 200: for as long as it takes while the process makes
 * progress (awaitStart). On a failed start the process is stopped again and the error carries
 * its last lines.
 */
export async function startService(launch: ServiceLaunch): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [...launch.args], { cwd: launch.cwd, env: childEnv(launch.env), stdio: ['ignore', 'pipe', 'pipe'] });
  const output: string[] = [];
  const logFile = logPath(launch.name);
  let ports: Ports | undefined;
  capture(child, logFile, output, (line) => {
    ports ??= startLine(line);
  });
  let exit: ServiceExit | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => (exit = { code: code as number | null, signal: signal as NodeJS.Signals | null }));
  // Never leave a service behind when the test process goes away without stopping it.
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  const logTail = (lines = 20): string => output.slice(-lines).join('\n');
  const stop = async (graceMs = 15_000): Promise<ServiceExit> => {
    if (exit === undefined) {
      child.kill(graceMs === 0 ? 'SIGKILL' : 'SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await exited;
      clearTimeout(timer);
    }
    process.removeListener('exit', orphanGuard);
    return exit!;
  };
  const failed = async (reason: string): Promise<never> => {
    await stop(2000);
    throw new Error(`${launch.name} ${reason}; log ${logFile}:\n${logTail(30)}`);
  };
  const outcome = await awaitStart(launch, { pid: child.pid, exit: () => exit, ports: () => ports, lines: () => output.length });
  if ('problem' in outcome) return failed(outcome.problem);
  const service: ServiceProcess = {
    name: launch.name,
    pid: child.pid ?? -1,
    ...outcome.ports,
    output,
    logFile,
    logTail,
    get exit() {
      return exit;
    },
    async management(path, timeoutMs = 10_000) {
      const response = await fetch(`http://127.0.0.1:${outcome.ports.managementPort}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
      return { status: response.status, body: await response.text() };
    },
    stop,
  };
  return service;
}

/** Stops every service (in parallel) and resolves with how each exited; never rejects. */
export async function stopServices(services: readonly ServiceProcess[], graceMs?: number): Promise<Record<string, ServiceExit>> {
  const exits = await Promise.all(services.map(async (service) => [service.name, await service.stop(graceMs)] as const));
  return Object.fromEntries(exits);
}
