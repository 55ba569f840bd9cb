import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { eventually } from '../../../test/support/eventually.js';
import { infra } from '../../../test/support/infra.js';
import { startCache, type RunningCache } from './cache-fixture.js';

const run = promisify(execFile);
const protoFile = fileURLToPath(new URL('../../../proto/cache/v1/cache.proto', import.meta.url));
const CALLS = 2000;

/** The part of ghz's JSON report these tests read. */
interface GhzReport {
  count: number;
  statusCodeDistribution: Record<string, number>;
  errorDistribution?: Record<string, number>;
}

/**
 * The cache service under load from ghz, grpc-go's client (v1.56 in ghz v0.121.0): many calls on
 * several connections at once, each with its own deadline, from the proto file (no reflection).
 * The transport is our own (@sp/grpc-server), so a client nobody here wrote is the check that it
 * speaks gRPC as grpc-go does, not only as grpc-js does.
 */
describe('cache service under ghz (grpc-go client)', () => {
  let cache: RunningCache;
  let client: CacheClient<string>;

  const ghz = async (method: string, data: object, ...args: string[]): Promise<GhzReport> => {
    const { stdout } = await run(
      infra('GHZ_BIN'),
      ['--insecure', '--proto', protoFile, '--call', `cache.v1.CacheGrpcService.${method}`, '-d', JSON.stringify(data), '--format', 'json', ...args, cache.address],
      { timeout: 60_000, maxBuffer: 16 * 1024 * 1024 },
    );
    return JSON.parse(stdout) as GhzReport;
  };

  beforeAll(async () => {
    cache = await startCache({ kind: 'memory', capacity: 10_000 });
    client = createCacheClient<string>({ address: cache.address }, stringSerializer);
  });

  afterAll(async () => {
    client.close();
    await cache.close();
  });

  it('should answer every Set from 16 concurrent calls on 4 connections with OK, and store each', async () => {
    // ghz fills {{.RequestNumber}} per call: 2,000 distinct keys.
    const report = await ghz('Set', { key: 'ghz:{{.RequestNumber}}', value: Buffer.from('from grpc-go').toString('base64'), ttl_ms: 60_000 }, '-n', String(CALLS), '-c', '16', '--connections', '4', '-t', '5s');
    expect(report.count).toBe(CALLS);
    expect(report.statusCodeDistribution).toEqual({ OK: CALLS });
    expect(report.errorDistribution ?? {}).toEqual({});
    expect(await client.get('ghz:0')).toBe('from grpc-go');
    expect(await client.get(`ghz:${CALLS - 1}`)).toBe('from grpc-go');
  });

  it('should answer every Get and Increment with OK, counting each Increment once', async () => {
    await client.set('ghz:read', 'value');
    const gets = await ghz('Get', { key: 'ghz:read' }, '-n', String(CALLS), '-c', '16', '--connections', '4', '-t', '5s');
    expect(gets.statusCodeDistribution).toEqual({ OK: CALLS });
    const increments = await ghz('Increment', { key: 'ghz:count', delta: 1, ttl_ms: 60_000 }, '-n', String(CALLS), '-c', '8', '--connections', '2', '-t', '5s');
    expect(increments.statusCodeDistribution).toEqual({ OK: CALLS });
    expect((await client.increment('ghz:count', 0)).value).toBe(CALLS);
  });

  it("should end Gets past grpc-go's 1 ms deadline with DeadlineExceeded or OK, never another status, and report every Get the cache handled", async () => {
    // 1 ms is below what a loopback call takes here: grpc-go sends grpc-timeout and ends the call by
    // its own timer, or on the server's RST_STREAM(CANCEL) after the deadline; either is
    // DeadlineExceeded (a reset before the client's deadline would be Canceled: the transport's
    // cancellation test, packages/grpc-server/test/cancellation.unit.test.ts).
    // ghz counts a call when grpc-go's stats handler sees it end, and grpc-go (v1.56.3 in ghz
    // v0.121.0, stream.go: waitForResolvedAddrs, newAttemptLocked) fails a call whose deadline
    // passed before its first attempt began without telling the stats handler. On a busy machine
    // some of the 200 are then never reported, and never sent: 1 to 5 in a third to a half of the
    // runs, the same against a listener that never answers. So the count is held to the cache's
    // own: each Get the cache handled was sent, so reported, and each OK was one it handled.
    await client.set('ghz:read', 'value');
    const handledBefore = await handledGets(cache);
    const late = await ghz('Get', { key: 'ghz:read' }, '-n', '200', '-c', '4', '-t', '1ms');
    const handled = (await handledGets(cache)) - handledBefore;
    expect(Object.keys(late.statusCodeDistribution).filter((code) => code !== 'OK' && code !== 'DeadlineExceeded')).toEqual([]);
    expect(late.count).toBeLessThanOrEqual(200);
    expect(late.count).toBeGreaterThanOrEqual(handled);
    expect(late.statusCodeDistribution.OK ?? 0).toBeLessThanOrEqual(handled);
    expect(await client.get('ghz:read')).toBe('value');
  });

  it("should end Subscribe streams at grpc-go's deadline with DeadlineExceeded, reporting each, and drop their subscriptions", async () => {
    // The cache never ends a Subscribe stream: its deadline does. 2 s leaves grpc-go the time to
    // begin every call (unlike 1 ms above), so each one is reported.
    const streams = await ghz('Subscribe', { prefixes: ['ghz:'] }, '-n', '20', '-c', '20', '-t', '2s');
    expect(streams.count).toBe(20);
    expect(streams.statusCodeDistribution).toEqual({ DeadlineExceeded: 20 });
    await eventually(async () => /^cache_subscriptions\{service="cache"\} 0$/m.test(await cache.registry.metrics()), 5000, 'no subscription left');
  });

  it('should refuse a TTL out of range with InvalidArgument', async () => {
    const refused = await ghz('Set', { key: 'ghz:ttl', value: '', ttl_ms: '9223372036854775807' }, '-n', '50', '-c', '2');
    expect(refused.count).toBe(50);
    expect(refused.statusCodeDistribution).toEqual({ InvalidArgument: 50 });
  });
});

/** How many Gets the cache handled, whatever their status (its metrics). */
async function handledGets(cache: RunningCache): Promise<number> {
  const counts = (await cache.registry.metrics()).matchAll(/^grpc_server_handling_seconds_count\{service="cache",method="Get",code="[A-Z_]+"\} (\d+)$/gm);
  return [...counts].reduce((sum, [, count]) => sum + Number(count), 0);
}
