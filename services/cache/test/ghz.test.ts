import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
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

  it("should end calls past ghz's deadline with DeadlineExceeded and a TTL out of range with InvalidArgument", async () => {
    // 1 ms is below what a loopback call takes here: grpc-go sends grpc-timeout and ends the call.
    const late = await ghz('Get', { key: 'ghz:read' }, '-n', '200', '-c', '4', '-t', '1ms');
    expect(late.count).toBe(200);
    expect(Object.keys(late.statusCodeDistribution).every((code) => code === 'OK' || code === 'DeadlineExceeded')).toBe(true);
    const refused = await ghz('Set', { key: 'ghz:ttl', value: '', ttl_ms: '9223372036854775807' }, '-n', '50', '-c', '2');
    expect(refused.statusCodeDistribution).toEqual({ InvalidArgument: 50 });
  });
});
