import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, fetch } from 'undici';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually } from '../../../test/support/eventually.js';
import { freePort } from '../../../test/support/redis-server.js';
import { testEnvironment } from './support/auth-fixture.js';

/** The service built by `tsc --build`, started as its container starts it. */
const mainPath = fileURLToPath(new URL('../dist/main.js', import.meta.url));

const childrenOf = (pid: number): number[] =>
  readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Auth__Workers: one replica's processes share its port; SIGTERM stops them all. */
describe('the auth service with node:cluster workers', () => {
  let cacheService: RunningCacheService;
  let primary: ChildProcess;
  let output = '';
  let baseUrl = '';
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false }, pipelining: 0 });
  const listening = (): number => output.split('\n').filter((line) => line.includes('auth service listening')).length;

  beforeAll(async () => {
    cacheService = await startCacheService();
    const port = await freePort();
    baseUrl = `https://127.0.0.1:${port}`;
    const env = {
      ...testEnvironment(cacheService.address),
      PATH: process.env.PATH ?? '',
      Auth__Workers: '2',
      Auth__Port: String(port),
      Auth__Host: '127.0.0.1',
      Management__Port: String(await freePort()),
      Log__Level: 'info',
    };
    primary = spawn(process.execPath, [mainPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    primary.stdout!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    primary.stderr!.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    await eventually(() => listening() === 2, 60_000, 'two workers listening');
  }, 90_000);

  afterAll(async () => {
    if (primary.exitCode === null) {
      primary.kill('SIGKILL');
      await once(primary, 'exit');
    }
    await dispatcher.close();
    await cacheService.close();
  });

  const status = async (): Promise<number> => {
    const response = await fetch(`${baseUrl}/auth`, { dispatcher, headers: { connection: 'close' } });
    await response.text();
    return response.status;
  };

  it('should serve the port from two worker processes and replace one that dies', async () => {
    const workers = childrenOf(primary.pid!);
    expect(workers).toHaveLength(2);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => status()));
    expect(new Set(statuses)).toEqual(new Set([401]));
    process.kill(workers[0]!, 'SIGKILL');
    await eventually(() => listening() === 3, 60_000, 'a replacement worker listening');
    const replaced = childrenOf(primary.pid!);
    expect(replaced).toHaveLength(2);
    expect(replaced).not.toContain(workers[0]);
    expect(await status()).toBe(401);
  }, 90_000);

  it('should stop every worker gracefully on SIGTERM and exit 0', async () => {
    const workers = childrenOf(primary.pid!);
    const exited = once(primary, 'exit');
    primary.kill('SIGTERM');
    const [code] = (await exited) as [number | null];
    expect(code).toBe(0);
    for (const pid of workers) expect(isAlive(pid)).toBe(false);
  }, 60_000);
});
