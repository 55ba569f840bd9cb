import type { IncomingHttpHeaders } from 'node:http';
import { request, type Server } from 'node:https';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, jsonSerializer, type CacheClient } from '@sp/cache-client';
import type { Registry } from '@sp/observability';
import { closeGracefully, listen, requestListener } from '@sp/http';
import { startCacheService, type RunningCacheService } from '../../../test/support/cache-service.js';
import { eventually } from '../../../test/support/eventually.js';
import type { AuthParts } from '../src/auth.js';
import { createAuthServer } from '../src/server.js';
import { newTokenId, type TokenRecord } from '../src/sessions/token-store.js';
import { createTestAuth, testCertificate } from './support/auth-fixture.js';

/** An answer as a proxy sees it: status, every header in the order sent (Date aside), body. */
interface RawAnswer {
  status: number;
  headers: string[];
  body: string;
}

const HOUR = 3_600_000;

/** A session as a login stores it, with an access token of the size Keycloak's are. */
function sessionRecord(now: number, overrides: Partial<TokenRecord> = {}): TokenRecord {
  return {
    accessToken: `eyJ${'a'.repeat(1400)}`,
    subject: 'direct-path-test',
    phoneNumber: '+4915100000000',
    sessionId: 'c2Vzc2lvbi1pZC0wMDAwMA',
    expiresAtMs: now + HOUR,
    issuedAtMs: now,
    sessionEndsAtMs: now + HOUR,
    lastSeenAtMs: now,
    renewAtMs: now + HOUR / 2,
    ...overrides,
  };
}

/**
 * GET /auth is answered from memory before Koa for a session the near cache holds (the direct
 * path), by the Koa route otherwise. A proxy must not be able to tell which one answered: the same
 * request through the service's listener and through its Koa app alone (the same instance, so the
 * same near cache, clock and metrics) gets the same status, headers and body, and counts the same
 * in the request metrics.
 */
describe('GET /auth from memory before Koa, and through Koa', () => {
  let cacheService: RunningCacheService;
  let cache: CacheClient<unknown>;
  let auth: AuthParts;
  let registry: Registry;
  let ca: string;
  const servers: Server[] = [];
  let direct = 0;
  let koa = 0;

  beforeAll(async () => {
    cacheService = await startCacheService();
    cache = createCacheClient<unknown>({ address: cacheService.address }, jsonSerializer);
    const instance = createTestAuth(cacheService.address);
    ({ auth, registry } = instance);
    const credentials = await testCertificate();
    ca = credentials.cert;
    const serve = async (server: Server): Promise<number> => {
      servers.push(server);
      return listen(server, 0, '127.0.0.1');
    };
    direct = await serve(createAuthServer(auth.listener, credentials));
    koa = await serve(createAuthServer(requestListener(auth.app), credentials));
  }, 30_000);

  afterAll(async () => {
    for (const server of servers) await closeGracefully(server, 1000);
    await auth.close();
    cache.close();
    await cacheService.close();
  });

  const send = (port: number, method: string, path: string, headers: IncomingHttpHeaders = {}): Promise<RawAnswer> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, method, path, headers, ca, agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => {
          const raw = res.rawHeaders;
          const sent: string[] = [];
          for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() !== 'date') sent.push(`${raw[i]}: ${raw[i + 1]}`);
          resolve({ status: res.statusCode!, headers: sent, body });
        });
      });
      req.on('error', reject);
      req.end();
    });

  /** http_requests_total and the duration histogram's count for GET /auth with that status. */
  const counted = async (status: number): Promise<{ requests: number; durations: number }> => {
    const values = async (name: string): Promise<number> => {
      const { values: series } = await registry.getSingleMetric(name)!.get();
      const labels = { method: 'GET', route: '/auth', status: String(status) };
      return series
        // A histogram's values are its buckets, sum and count, each named.
        .filter((sample) => ((sample as { metricName?: string }).metricName ?? name) === (name === 'http_request_duration_seconds' ? `${name}_count` : name))
        .filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels[key] === value))
        .reduce((sum, sample) => sum + sample.value, 0);
    };
    return { requests: await values('http_requests_total'), durations: await values('http_request_duration_seconds') };
  };

  /** The same request through both listeners: both answers, and what each added to the metrics of its status. */
  const both = async (method: string, path: string, headers: IncomingHttpHeaders = {}) => {
    const answers: RawAnswer[] = [];
    const metrics: Array<{ requests: number; durations: number }> = [];
    for (const port of [direct, koa]) {
      const before = await counted(200);
      const beforeRefused = await counted(401);
      const answer = await send(port, method, path, headers);
      const after = await counted(answer.status === 401 ? 401 : 200);
      const base = answer.status === 401 ? beforeRefused : before;
      answers.push(answer);
      metrics.push({ requests: after.requests - base.requests, durations: after.durations - base.durations });
    }
    return { answers, metrics };
  };

  /** A session in the cache service, read once so that the near cache holds it. */
  const hotSession = async (record: TokenRecord): Promise<string> => {
    const tokenId = newTokenId();
    await cache.set(`token:${tokenId}`, record, HOUR);
    await eventually(async () => {
      await send(koa, 'GET', '/auth', { cookie: `TokenId=${tokenId}` });
      return auth.services.tokens.recall(tokenId) !== undefined;
    }, 10_000, 'the session in the near cache');
    return tokenId;
  };

  it('should answer a session held in memory with the same status, headers, body and metrics on both paths', async () => {
    const tokenId = await hotSession(sessionRecord(Date.now()));
    for (const path of ['/auth', '/auth?rd=%2Fapp']) {
      const { answers, metrics } = await both('GET', path, { cookie: `theme=dark; TokenId=${tokenId}` });
      expect(answers[0]!.status).toBe(200);
      expect(answers[0]!.headers).toContain(`Authorization: Bearer eyJ${'a'.repeat(1400)}`);
      expect(answers[0]).toEqual(answers[1]);
      expect(metrics[0]).toEqual({ requests: 1, durations: 1 });
      expect(metrics[1]).toEqual(metrics[0]);
    }
  });

  it('should answer what memory cannot answer (no cookie, an unknown session, HEAD) the same on both paths', async () => {
    const tokenId = await hotSession(sessionRecord(Date.now()));
    for (const [method, headers] of [
      ['GET', {}],
      ['GET', { cookie: `TokenId=${newTokenId()}` }],
      ['GET', { cookie: 'TokenId=not-a-token-id' }],
      ['HEAD', { cookie: `TokenId=${tokenId}` }],
    ] as const) {
      const { answers, metrics } = await both(method, '/auth', headers);
      expect(answers[0]).toEqual(answers[1]);
      if (method === 'GET') expect(metrics[1]).toEqual(metrics[0]);
    }
  });

  it('should refuse on both paths a session this replica is removing, from the moment the removal starts', async () => {
    const tokenId = await hotSession(sessionRecord(Date.now()));
    // What a logout does once it holds the renewal lock; the near cache may still hold the record.
    const removing = auth.services.tokens.remove(tokenId);
    const { answers, metrics } = await both('GET', '/auth', { cookie: `TokenId=${tokenId}` });
    await removing;
    expect(answers[0]!.status).toBe(401);
    expect(answers[0]).toEqual(answers[1]);
    expect(metrics[0]).toEqual({ requests: 1, durations: 1 });
    expect(metrics[1]).toEqual(metrics[0]);
  });

  it('should leave a session due for its write-back to the Koa route on both paths', async () => {
    const now = Date.now();
    // Not due when read into memory; due a moment later (the use is written back, the token served meanwhile).
    const tokenId = await hotSession(sessionRecord(now, { renewAtMs: now + 1500 }));
    await eventually(() => Date.now() > now + 1500, 5000, 'the session due');
    const { answers, metrics } = await both('GET', '/auth', { cookie: `TokenId=${tokenId}` });
    expect(answers[0]!.status).toBe(200);
    expect(answers[0]).toEqual(answers[1]);
    expect(metrics[1]).toEqual(metrics[0]);
  });
});
