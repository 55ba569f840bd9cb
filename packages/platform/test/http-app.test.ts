import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Server } from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { AppError, badRequest } from '../src/errors.js';
import { createHttpApp } from '../src/koa.js';
import { createLogger } from '../src/logger.js';

const logger = createLogger({ service: 'test', level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const registry = new Registry();
let server: Server;
let base: string;

beforeAll(async () => {
  const routes = new Map<string, Koa.Middleware>([
    [
      '/sync',
      (ctx) => {
        ctx.body = 'sync';
      },
    ],
    [
      '/async',
      async (ctx) => {
        ctx.body = await Promise.resolve('async');
      },
    ],
    ['/throws', () => {
      throw badRequest('thrown before any promise');
    }],
    ['/rejects', () => Promise.reject(new AppError(409, 'conflict', 'rejected later'))],
    ['/refuses', () => Promise.reject(new AppError(429, 'too_many_requests', 'slow down', { reason: 'ip_limit', headers: { 'Retry-After': '7' } }))],
    ['/crashes', () => {
      throw new Error('secret detail');
    }],
  ]);
  const app = createHttpApp({ logger, registry, headers: { 'X-Frame-Options': 'DENY' }, routes });
  app.use((ctx) => {
    ctx.body = `fallback ${ctx.path}`;
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function get(path: string): Promise<{ status: number; body: string; frame: string | null }> {
  const response = await fetch(`${base}${path}`);
  return { status: response.status, body: await response.text(), frame: response.headers.get('x-frame-options') };
}

describe('createHttpApp routes', () => {
  it('should dispatch exact paths, sync or async, and pass any other path on', async () => {
    expect(await get('/sync')).toEqual({ status: 200, body: 'sync', frame: 'DENY' });
    expect(await get('/async?x=1')).toEqual({ status: 200, body: 'async', frame: 'DENY' });
    expect(await get('/sync/')).toEqual({ status: 200, body: 'fallback /sync/', frame: 'DENY' });
    expect(await get('/SYNC')).toEqual({ status: 200, body: 'fallback /SYNC', frame: 'DENY' });
  });

  it('should answer a route that throws or rejects as a JSON error with the constant headers', async () => {
    expect(await get('/throws')).toEqual({ status: 400, body: '{"error":"thrown before any promise"}', frame: 'DENY' });
    expect(await get('/rejects')).toEqual({ status: 409, body: '{"error":"rejected later"}', frame: 'DENY' });
    const refused = await fetch(`${base}/refuses`);
    expect({ status: refused.status, retryAfter: refused.headers.get('retry-after'), body: await refused.text() }).toEqual({ status: 429, retryAfter: '7', body: '{"error":"slow down","reason":"ip_limit"}' });
    const crash = await get('/crashes');
    expect(crash.status).toBe(500);
    expect(crash.body).not.toContain('secret detail');
  });

  it('should label a routed request with its path and any other one as unmatched', async () => {
    await get('/sync');
    await get('/nowhere/42');
    const exposition = await registry.metrics();
    expect(exposition).toMatch(/http_requests_total\{method="GET",route="\/sync",status="200"\} \d+/);
    expect(exposition).toMatch(/http_requests_total\{method="GET",route="\/throws",status="400"\} 1/);
    expect(exposition).toMatch(/http_requests_total\{method="GET",route="unmatched",status="200"\} \d+/);
    expect(exposition).not.toContain('/nowhere');
  });
});
