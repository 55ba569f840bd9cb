import { afterEach, describe, expect, it } from '@jest/globals';
import { Writable } from 'node:stream';
import { Counter } from 'prom-client';
import { createLogger } from '@sp/observability';
import { createRegistry } from '@sp/observability';
import { startManagementServer, type ManagementServer } from '../src/management-server.js';
import type { ReadinessCheck } from '../src/readiness.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
let server: ManagementServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(readiness: ReadinessCheck[]): Promise<string> {
  const registry = createRegistry('test');
  new Counter({ name: 'widgets_total', help: 'widgets', registers: [registry] }).inc(3);
  server = await startManagementServer({ port: 0, host: '127.0.0.1', registry, readiness, logger, checkTimeoutMs: 300 });
  return `http://127.0.0.1:${server.port}`;
}

describe('management server', () => {
  it('should serve Prometheus metrics with the default process metrics', async () => {
    const base = await start([]);
    const res = await fetch(`${base}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    expect(text).toContain('widgets_total{service="test"} 3');
    expect(text).toContain('process_cpu_user_seconds_total');
  });

  it('should answer /livez while a dependency is down', async () => {
    const base = await start([{ name: 'redis', check: () => Promise.reject(new Error('ECONNREFUSED')) }]);
    expect((await fetch(`${base}/livez`)).status).toBe(200);
  });

  it('should answer /readyz 200 when every check passes', async () => {
    const base = await start([{ name: 'redis', check: () => Promise.resolve() }]);
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: 'ok', failing: [], checks: { redis: 'ok' } });
  });

  it('should answer /readyz 503 naming the failing and the hanging check', async () => {
    const base = await start([
      { name: 'redis', check: () => Promise.resolve() },
      { name: 'kafka', check: () => Promise.reject(new Error('connection refused')) },
      { name: 'keycloak', check: () => new Promise<void>(() => undefined) },
    ]);
    const res = await fetch(`${base}/readyz`);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({
      status: 'unavailable',
      failing: ['kafka', 'keycloak'],
      checks: { redis: 'ok', kafka: 'connection refused', keycloak: 'timed out after 300 ms' },
    });
  });

  it('should fail readiness once shutdown has begun', async () => {
    const base = await start([]);
    server!.markShuttingDown();
    expect((await fetch(`${base}/readyz`)).status).toBe(503);
  });
});
