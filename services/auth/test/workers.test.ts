import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Agent, fetch } from 'undici';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually } from '../../../test/support/eventually.js';
import { freePorts } from '../../../test/support/free-port.js';
import { npmStart, startService, type ServiceProcess } from '../../../test/support/service-process.js';
import { testEnvironment } from './support/auth-fixture.js';
import { cpuTimeMs, HANG_GUARD_MS } from '../../../test/support/progress.js';

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
  let primary: ServiceProcess;
  let baseUrl = '';
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false }, pipelining: 0 });
  const listening = (): number => primary.output.filter((line) => line.includes('auth service listening')).length;
  /** Workers starting: the CPU time the primary's children use, and the lines the primary relays. */
  const workersStarting = { progress: () => [primary.output.length, ...childrenOf(primary.pid).map(cpuTimeMs)] };

  beforeAll(async () => {
    cacheService = await startCacheService();
    const [port = 0, managementPort = 0] = await freePorts(2);
    baseUrl = `https://127.0.0.1:${port}`;
    const env = {
      ...testEnvironment(cacheService.address),
      Auth__Workers: '2',
      Auth__Port: String(port),
      Auth__Host: '127.0.0.1',
      Management__Port: String(managementPort),
      Log__Level: 'info',
    };
    // From its build: `node dist/main.js`.
    primary = await startService({ name: 'auth', cwd: npmStart('auth').cwd, args: ['dist/main.js'], env });
    await eventually(() => listening() === 2, workersStarting, 'two workers listening');
  }, HANG_GUARD_MS);

  afterAll(async () => {
    await primary?.stop(0);
    await dispatcher.close();
    await cacheService.close();
  });

  const status = async (): Promise<number> => {
    const response = await fetch(`${baseUrl}/auth`, { dispatcher, headers: { connection: 'close' } });
    await response.text();
    return response.status;
  };

  it('should serve the port from two worker processes and replace one that dies', async () => {
    const workers = childrenOf(primary.pid);
    expect(workers).toHaveLength(2);
    const statuses = await Promise.all(Array.from({ length: 20 }, () => status()));
    expect(new Set(statuses)).toEqual(new Set([401]));
    process.kill(workers[0]!, 'SIGKILL');
    await eventually(() => listening() === 3, workersStarting, 'a replacement worker listening');
    const replaced = childrenOf(primary.pid);
    expect(replaced).toHaveLength(2);
    expect(replaced).not.toContain(workers[0]);
    expect(await status()).toBe(401);
  }, HANG_GUARD_MS);

  it('should stop every worker gracefully on SIGTERM and exit 0', async () => {
    const workers = childrenOf(primary.pid);
    const exit = await primary.stop(50_000);
    expect(exit.code).toBe(0);
    for (const pid of workers) expect(isAlive(pid)).toBe(false);
  }, 60_000);
});
