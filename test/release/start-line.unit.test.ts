import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { platformVersion } from '@sp/observability';
import { HANG_GUARD_MS } from '../support/progress.js';
import { sourcesStart, startService, type ServiceProcess } from '../support/service-process.js';

/**
 * The version an operator sees on a running service, here the cache on its memory backend run from
 * its sources (no dependency; test/deploy/metrics.test.ts checks all five from their builds).
 */
let service: ServiceProcess;

beforeAll(async () => {
  const { cwd, args, env } = sourcesStart('cache');
  service = await startService({
    name: 'cache-version',
    cwd,
    args,
    env: { ...env, Cache__Host: '127.0.0.1', Cache__Port: '0', Management__Port: '0' },
  });
}, HANG_GUARD_MS);

afterAll(async () => {
  await service?.stop();
});

describe('a service\'s version', () => {
  it('should be named by its first log line', () => {
    const first = JSON.parse(service.output[0]!) as Record<string, unknown>;
    expect({ level: first.level, msg: first.msg, version: first.version, service: first.service }).toEqual({
      level: 'info',
      msg: `cache ${platformVersion()} starting`,
      version: platformVersion(),
      service: 'cache',
    });
  });

  it('should be named by the first log line at a quieter level than info too', async () => {
    const { cwd, args, env } = sourcesStart('cache');
    const child = spawn(process.execPath, args, {
      cwd,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, ...env, Cache__Host: '127.0.0.1', Cache__Port: '0', Management__Port: '0', Log__Level: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    try {
      const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      expect(JSON.parse(first)).toMatchObject({ level: 'info', msg: `cache ${platformVersion()} starting` });
    } finally {
      child.kill('SIGKILL');
    }
  }, HANG_GUARD_MS);

  it('should be on /metrics as the build-info gauge', async () => {
    const { status, body } = await service.management('/metrics');
    expect(status).toBe(200);
    expect(body.split('\n').filter((line) => line.startsWith('subscription_platform_build_info'))).toEqual([
      `subscription_platform_build_info{version="${platformVersion()}",service="cache"} 1`,
    ]);
  });
});
