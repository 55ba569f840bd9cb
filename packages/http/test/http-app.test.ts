import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { createServer, type Server } from 'node:http';
import type Koa from 'koa';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Registry } from 'prom-client';
import { AppError, badRequest } from '@sp/core';
import { answerEmpty } from '../src/direct-routes.js';
import { createHttpApp, createHttpService } from '../src/koa.js';
import { createLogger } from '@sp/observability';

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

/** A span context as a trace propagated from a caller would give (sampled). */
const SPAN = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.SAMPLED };

describe('createHttpService direct routes', () => {
  let service: Server;
  let url = '';
  let answer: readonly string[] | undefined;
  let fail = false;
  let traced = false;
  const serviceRegistry = new Registry();

  beforeAll(async () => {
    const { app, listener } = createHttpService({
      logger,
      registry: serviceRegistry,
      headers: { 'X-Frame-Options': 'DENY' },
      routes: new Map<string, Koa.Middleware>([['/fast', (ctx) => answerEmpty(ctx, ['X-Answer', 'koa'])]]),
      directRoutes: new Map([
        [
          '/fast',
          () => {
            if (fail) throw new Error('direct route failed');
            return answer;
          },
        ],
      ]),
    });
    app.use((ctx) => {
      ctx.body = `fallback ${ctx.path}`;
    });
    // As the HTTP instrumentation runs a request's handlers in the context of its server span.
    service = createServer((req, res) => context.with(traced ? trace.setSpan(context.active(), trace.wrapSpanContext(SPAN)) : context.active(), () => listener(req, res)));
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(service.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    service.closeAllConnections();
    await new Promise((resolve) => service.close(resolve));
  });

  /** Status, headers in the order sent (Date and the connection's own aside) and body. */
  const send = async (path: string, method = 'GET'): Promise<{ status: number; headers: Array<[string, string]>; body: string }> => {
    const response = await fetch(`${url}${path}`, { method });
    const skip = new Set(['date', 'connection', 'keep-alive']);
    return { status: response.status, headers: [...response.headers].filter(([name]) => !skip.has(name)), body: await response.text() };
  };

  it('should answer with the direct route\'s headers before Koa, exactly as Koa answers the same headers', async () => {
    answer = ['X-Answer', 'direct'];
    const fast = await send('/fast?x=1');
    answer = undefined;
    const slow = await send('/fast');
    expect(fast.headers).toContainEqual(['x-answer', 'direct']);
    expect(slow.headers).toContainEqual(['x-answer', 'koa']);
    const same = (reply: typeof fast) => ({ ...reply, headers: reply.headers.map(([name, value]) => [name, name === 'x-answer' ? '' : value]) });
    expect(same(fast)).toEqual(same(slow));
    expect(fast).toMatchObject({ status: 200, body: '' });
    expect(fast.headers).toEqual(expect.arrayContaining([['x-frame-options', 'DENY'], ['content-type', 'text/plain; charset=utf-8'], ['content-length', '0']]));
  });

  it('should leave to Koa what the direct route does not answer: other methods and paths, a route that throws', async () => {
    answer = ['X-Answer', 'direct'];
    expect((await send('/fast', 'POST')).headers).toContainEqual(['x-answer', 'koa']);
    expect((await send('/fast/')).body).toBe('fallback /fast/');
    fail = true;
    try {
      expect((await send('/fast')).headers).toContainEqual(['x-answer', 'koa']);
    } finally {
      fail = false;
    }
  });

  it('should leave every request to Koa while a trace is active, so that traces keep their Koa spans', async () => {
    answer = ['X-Answer', 'direct'];
    // The context manager the SDK installs in production (NodeSDK), so a trace is active the way it is there.
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    traced = true;
    try {
      expect((await send('/fast')).headers).toContainEqual(['x-answer', 'koa']);
    } finally {
      traced = false;
      context.disable();
    }
    expect((await send('/fast')).headers).toContainEqual(['x-answer', 'direct']);
  });

  it('should count a direct answer in the request metrics as Koa counts the same route', async () => {
    const count = async (): Promise<number> => {
      const { values } = await serviceRegistry.getSingleMetric('http_requests_total')!.get();
      return values.find((value) => value.labels.route === '/fast' && value.labels.status === '200' && value.labels.method === 'GET')?.value ?? 0;
    };
    const before = await count();
    answer = ['X-Answer', 'direct'];
    await send('/fast');
    answer = undefined;
    await send('/fast');
    expect((await count()) - before).toBe(2);
    expect(await serviceRegistry.metrics()).toMatch(/http_request_duration_seconds_count\{method="GET",route="\/fast",status="200"\} \d+/);
  });
});
