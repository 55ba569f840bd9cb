import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { eventually } from './eventually.js';
import { exitOf, processProgress } from './progress.js';
import { freePort } from './free-port.js';
import { infra } from './infra.js';
import { startAll } from './start-all.js';

export { freePort };

/** A redis-server a test can freeze, as a hung Redis. */
export interface PausableRedis {
  /** Freezes the server (SIGSTOP): it keeps its connections open but answers nothing, like a hung Redis. */
  pause(): void;
  /** Lets a paused server go on (SIGCONT). */
  resume(): void;
}

/** A redis-server of the test's own, which the test may stop and start again on the same port. */
export interface PrivateRedis extends PausableRedis {
  url: string;
  port: number;
  stop(): Promise<void>;
  start(): Promise<void>;
}

/** One PING over a plain socket: no client library, so no reconnect timers outlive the check. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    const done = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(1000, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    // A server with a password answers NOAUTH before AUTH: it serves all the same.
    socket.once('data', (chunk: Buffer) => done(/^(\+PONG|-NOAUTH)/.test(chunk.toString())));
  });
}

/** Until the redis-server `child` answers PING on `port`, for as long as it runs and makes progress (progress.ts). */
export async function waitForPing(port: number, child: ChildProcess): Promise<void> {
  await eventually(() => ping(port), { progress: processProgress(child.pid), gone: () => exitOf(child) }, `redis-server on port ${port} answering PING`);
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;
  const start = async (): Promise<void> => {
    child = spawn(infra('REDIS_SERVER_BIN'), ['--bind', '127.0.0.1', '--port', String(port), '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitForPing(port, child);
  };
  const stop = async (): Promise<void> => {
    // A killed child has a signalCode and no exitCode: without that check a second stop waits forever.
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = once(child, 'exit');
    child.kill('SIGKILL');
    await exited;
  };
  const signal = (name: NodeJS.Signals): void => {
    if (!child || child.exitCode !== null) throw new Error('the private redis-server is not running');
    child.kill(name);
  };
  await start();
  return { url, port, start, stop, pause: () => signal('SIGSTOP'), resume: () => signal('SIGCONT') };
}

/** A redis-server (or sentinel) process of a test's own set, which the test may SIGKILL. */
export interface RedisProcess extends PausableRedis {
  port: number;
  /** SIGKILL, as a crash or a lost machine: no shutdown, no last write. Resolves once it is gone. */
  kill(): Promise<void>;
  readonly alive: boolean;
}

/** Starts `redis-server <args…>` on `port` and waits until it answers PING; a server that exits first fails with its last output. */
export async function spawnRedis(port: number, args: readonly string[]): Promise<RedisProcess> {
  const child = spawn(infra('REDIS_SERVER_BIN'), [...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const keep = (chunk: Buffer): void => void (output = (output + chunk.toString()).slice(-2000));
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = once(child, 'exit');
  try {
    await waitForPing(port, child);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`${(error as Error).message}: ${output.trim().split('\n').slice(-3).join(' | ')}`);
  }
  // Its output is not kept any further, but still read: a full pipe would stall the server.
  child.stdout.off('data', keep);
  child.stderr.off('data', keep);
  child.stdout.resume();
  child.stderr.resume();
  return {
    port,
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    async kill() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    pause: () => void child.kill('SIGSTOP'),
    resume: () => void child.kill('SIGCONT'),
  };
}

/** Starts several redis-servers at once; if one fails, the others are killed before the error is thrown. */
export async function spawnRedisNodes(nodes: ReadonlyArray<{ port: number; args: readonly string[] }>): Promise<RedisProcess[]> {
  return startAll<RedisProcess[]>(nodes.map(({ port, args }) => [spawnRedis(port, args), (node: RedisProcess) => node.kill()] as const));
}
