import { spawnSync } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { infra } from '../../../test/support/infra.js';
import { createRegistry } from '../src/metrics.js';
import { createRequestMetrics } from '../src/request-metrics.js';

/** The value of the one exposition line that has exactly these labels (in any order). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const line of text.split('\n')) {
    const match = /^([a-z_]+)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match || match[1] !== name) continue;
    const found = Object.fromEntries(match[2]!.split(',').map((pair) => pair.split('=') as [string, string]).map(([key, value]) => [key, JSON.parse(value) as string]));
    if (JSON.stringify(Object.entries(found).sort()) === JSON.stringify(Object.entries(labels).sort())) return Number(match[3]);
  }
  return undefined;
}

describe('request metrics', () => {
  it('should count requests and bucket their durations per method, route and status, with the service label', async () => {
    const registry = createRegistry('test');
    const record = createRequestMetrics(registry);
    record('GET', '/auth', 200, 0.0004);
    record('GET', '/auth', 200, 0.003);
    record('GET', '/auth', 200, 7);
    record('GET', '/auth', 401, 0.02);
    record('POST', '/otp', 200, 0.001);

    const text = await registry.metrics();
    const auth = { method: 'GET', route: '/auth', status: '200', service: 'test' };
    expect(sample(text, 'http_requests_total', auth)).toBe(3);
    expect(sample(text, 'http_requests_total', { ...auth, status: '401' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...auth, le: '0.001' })).toBe(1);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...auth, le: '0.005' })).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...auth, le: '5' })).toBe(2);
    expect(sample(text, 'http_request_duration_seconds_bucket', { ...auth, le: '+Inf' })).toBe(3);
    expect(sample(text, 'http_request_duration_seconds_sum', auth)).toBeCloseTo(7.0034, 6);
    expect(sample(text, 'http_request_duration_seconds_count', auth)).toBe(3);
    // A duration on a bound falls in that bucket (Prometheus buckets are "less than or equal").
    expect(sample(text, 'http_request_duration_seconds_bucket', { method: 'POST', route: '/otp', status: '200', service: 'test', le: '0.001' })).toBe(1);
    expect(text).toContain('# TYPE http_request_duration_seconds histogram');
    expect(text).toContain('# TYPE http_requests_total counter');

    // Counts keep growing across scrapes (counters are never reset by a scrape).
    record('GET', '/auth', 200, 0.0004);
    expect(sample(await registry.metrics(), 'http_requests_total', auth)).toBe(4);
  });

  it('should be valid Prometheus exposition text (promtool check metrics)', async () => {
    const registry = createRegistry('test');
    const record = createRequestMetrics(registry);
    record('GET', '/graphs/:name', 200, 0.002);
    record('DELETE', '/graphs/:name', 404, 0.0001);
    const check = spawnSync(infra('PROMTOOL_BIN'), ['check', 'metrics'], { input: await registry.metrics(), encoding: 'utf8' });
    // promtool also lints naming (exit 3 for lint warnings only); errors in the text are exit 1.
    expect(check.stdout + check.stderr).not.toMatch(/error/i);
    expect([0, 3]).toContain(check.status);
  });
});
