import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createWriteStream, existsSync, mkdtempSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '../support/redis-server.js';

export type ServiceName = 'cache' | 'graph-registry' | 'auth' | 'webhooks' | 'graph-controller';

/** The variable naming each service's API port (so several instances run side by side); the controller serves none. */
const PORT_VARIABLE: Record<ServiceName, string | undefined> = {
  cache: 'Cache__Port',
  'graph-registry': 'Registry__Port',
  auth: 'Auth__Port',
  webhooks: 'Webhooks__Port',
  'graph-controller': undefined,
};

const servicesDir = fileURLToPath(new URL('../../services/', import.meta.url));

export interface ServiceSpec {
  name: ServiceName;
  /** The service's settings for a given API port (some name their own public URL). */
  env(port: number): Record<string, string>;
  /** Fixed ports; free ones by default. */
  port?: number;
  managementPort?: number;
}

export interface ServiceExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface ServiceProcess {
  name: ServiceName;
  /** The API port; 0 for the graph controller, which has only its management port. */
  port: number;
  managementPort: number;
  pid: number;
  /** Where its stdout and stderr go. */
  logFile: string;
  /** The last lines it wrote. */
  logTail(lines?: number): string;
  /** SIGTERM, then SIGKILL past `graceMs`; resolves with how it exited. */
  stop(graceMs?: number): Promise<ServiceExit>;
  /** Set once the process has exited. */
  readonly exit: ServiceExit | undefined;
}

let logDir: string | undefined;
/** One temporary folder of logs per test process. */
function logPath(name: string, attempt: number): string {
  logDir ??= mkdtempSync(join(tmpdir(), 'sp-e2e-'));
  return join(logDir, `${name}${attempt === 0 ? '' : `-${attempt}`}.log`);
}

/** The child's environment: only what a service needs from ours (no NODE_ENV=test, no JEST_*), plus its settings. */
function childEnv(settings: Record<string, string>): Record<string, string> {
  const inherited = Object.fromEntries(['PATH', 'HOME', 'TMPDIR', 'LANG', 'TZ'].flatMap((name) => (process.env[name] === undefined ? [] : [[name, process.env[name]]])));
  return { ...inherited, ...settings };
}

function capture(child: ChildProcess, file: WriteStream): string[] {
  const recent: string[] = [];
  const keep = (chunk: Buffer): void => {
    file.write(chunk);
    recent.push(...chunk.toString('utf8').split('\n').filter((line) => line !== ''));
    if (recent.length > 200) recent.splice(0, recent.length - 200);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return recent;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function readyz(managementPort: number): Promise<{ status: number; text: string }> {
  try {
    const response = await fetch(`http://127.0.0.1:${managementPort}/readyz`, { signal: AbortSignal.timeout(2000) });
    return { status: response.status, text: await response.text() };
  } catch (err) {
    return { status: 0, text: (err as Error).message };
  }
}

/** Polls /readyz on the management port until 200; fails when the process exits first or after `timeoutMs`. */
async function waitReady(service: ServiceProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = { status: 0, text: '' };
  while (Date.now() < deadline) {
    if (service.exit !== undefined) throw new Error(`${service.name} exited during start (${JSON.stringify(service.exit)}):\n${service.logTail(15)}`);
    last = await readyz(service.managementPort);
    if (last.status === 200) return;
    await sleep(200);
  }
  throw new Error(`${service.name} not ready within ${timeoutMs} ms (readyz: ${last.status} ${last.text}); log ${service.logFile}:\n${service.logTail(15)}`);
}

function launch(spec: ServiceSpec, port: number, managementPort: number, attempt: number): ServiceProcess {
  const portVariable = PORT_VARIABLE[spec.name];
  const settings = { ...spec.env(port), ...(portVariable === undefined ? {} : { [portVariable]: String(port) }), Management__Port: String(managementPort) };
  const child = spawn(process.execPath, ['--enable-source-maps', '--import', './dist/instrument.js', 'dist/main.js'], {
    cwd: join(servicesDir, spec.name),
    env: childEnv(settings),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logFile = logPath(spec.name, attempt);
  const file = createWriteStream(logFile);
  const recent = capture(child, file);
  let exit: ServiceExit | undefined;
  const exited = once(child, 'exit').then(([code, signal]) => {
    exit = { code: code as number | null, signal: signal as NodeJS.Signals | null };
    file.end();
    return exit;
  });
  // Never leave a service behind when the test process goes away without stopping it.
  const orphanGuard = (): void => void child.kill('SIGKILL');
  process.once('exit', orphanGuard);
  return {
    name: spec.name,
    port,
    managementPort,
    pid: child.pid ?? -1,
    logFile,
    logTail: (lines = 20) => recent.slice(-lines).join('\n'),
    get exit() {
      return exit;
    },
    async stop(graceMs = 15_000) {
      if (exit === undefined) {
        child.kill('SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(timer);
      }
      process.removeListener('exit', orphanGuard);
      return exit!;
    },
  };
}

/** A start that failed because a free port was taken meanwhile is retried (twice) with other free ports. */
function worthRetrying(spec: ServiceSpec, failed: ServiceProcess, attempt: number): boolean {
  const fixedPorts = spec.port !== undefined && spec.managementPort !== undefined;
  return !fixedPorts && attempt < 2 && /EADDRINUSE/.test(failed.logTail(50));
}

/**
 * Starts a service from its build (`node --import ./dist/instrument.js dist/main.js` in
 * services/<name>, as `npm start` does; run `npx tsc --build` first) and waits until its
 * /readyz answers 200. A free port taken by someone else meanwhile is retried with others.
 */
export async function startService(spec: ServiceSpec, readyTimeoutMs = 30_000): Promise<ServiceProcess> {
  if (!existsSync(join(servicesDir, spec.name, 'dist', 'main.js'))) throw new Error(`services/${spec.name} is not built: run npx tsc --build first`);
  for (let attempt = 0; ; attempt++) {
    const port = PORT_VARIABLE[spec.name] === undefined ? 0 : (spec.port ?? (await freePort()));
    const managementPort = spec.managementPort ?? (await freePort());
    const service = launch(spec, port, managementPort, attempt);
    try {
      await waitReady(service, readyTimeoutMs);
      return service;
    } catch (err) {
      await service.stop(2000);
      if (!worthRetrying(spec, service, attempt)) throw err;
    }
  }
}

/** Stops every service (in parallel) and resolves with how each exited; never rejects. */
export async function stopServices(services: readonly ServiceProcess[], graceMs?: number): Promise<Record<string, ServiceExit>> {
  const exits = await Promise.all(services.map(async (service) => [service.name, await service.stop(graceMs)] as const));
  return Object.fromEntries(exits);
}
