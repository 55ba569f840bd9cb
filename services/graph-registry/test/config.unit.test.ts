import { describe, expect, it } from '@jest/globals';
import { configProblems } from '../../../test/support/config-problems.js';
import { loadConfig } from '../src/config.js';

const problemsOf = (environment: Record<string, string>): readonly string[] => configProblems(() => loadConfig(environment));

describe('configuration', () => {
  it('should report a missing STORE_URL and a missing MONITOR_API_KEY together', () => {
    expect(problemsOf({})).toEqual(['STORE_URL: is required', 'MONITOR_API_KEY: is required']);
  });

  it('should treat empty values as missing', () => {
    expect(problemsOf({ STORE_URL: '', MONITOR_API_KEY: '  ' })).toEqual(['STORE_URL: is required', 'MONITOR_API_KEY: is required']);
  });

  it.each([['http://redis:6379'], ['postgres://db/registry'], ['not a url']])('should refuse STORE_URL=%s', (url) => {
    expect(problemsOf({ STORE_URL: url, MONITOR_API_KEY: 'key' })).toEqual(['STORE_URL: must be memory:// or a Redis URL (must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...)']);
  });

  it.each([['redis:'], ['redis:///0'], ['rediss://']])('should refuse STORE_URL=%s, which names no host', (url) => {
    expect(problemsOf({ STORE_URL: url, MONITOR_API_KEY: 'key' })).toEqual(['STORE_URL: a redis:// or rediss:// URL must name a host']);
  });

  it.each([['redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster'], ['redis+cluster://:secret@127.0.0.1:7000,127.0.0.1:7001']])('should accept STORE_URL=%s', (url) => {
    expect(loadConfig({ STORE_URL: url, MONITOR_API_KEY: 'key' }).store).toEqual({ kind: 'redis', url });
  });

  it('should refuse a Sentinel URL that names no master', () => {
    expect(problemsOf({ STORE_URL: 'redis+sentinel://127.0.0.1:26379', MONITOR_API_KEY: 'key' })).toEqual([expect.stringMatching(/^STORE_URL: a redis\+sentinel URL must name the master/)]);
  });

  it('should report every invalid variable at once, by name', () => {
    expect(problemsOf({ STORE_URL: 'ftp://x', MONITOR_API_KEY: ',', Registry__Port: '70000', Management__Port: 'abc', Log__Level: 'loud' })).toEqual([
      'STORE_URL: must be memory:// or a Redis URL (must be redis://, rediss://, redis+sentinel://host:port,.../master or redis+cluster://host:port,...)',
      'MONITOR_API_KEY: must list at least one value',
      expect.stringMatching(/^Registry__Port: /),
      expect.stringMatching(/^Management__Port: /),
      expect.stringMatching(/^Log__Level: /),
    ]);
  });

  it('should apply the documented defaults', () => {
    expect(loadConfig({ STORE_URL: 'redis://127.0.0.1:6379', MONITOR_API_KEY: 'key' })).toEqual({
      port: 5145,
      host: '0.0.0.0',
      managementPort: 9464,
      store: { kind: 'redis', url: 'redis://127.0.0.1:6379' },
      apiKeys: ['key'],
      logLevel: 'info',
      shutdownGraceMs: 10_000,
      schemaChecker: { workers: 1, timeBudgetMs: 1000, compositionBudgetMs: 10_000, maxQueued: 8, maxMemoryMb: 512 },
      schemaPublishing: { policy: 'allow', keep: 100, topic: 'schema-changes' },
      federation: { keepSubgraph: 100, keepSupergraph: 20, maxSubgraphs: 300, maxTotalBytes: 8 * 1024 * 1024, leaseMs: 20_000, leaseWaitMs: 30_000 },
      cdn: { keys: [], target: 'default' },
    });
  });

  it('should take the CDN keys and target, refusing a CDN key that is also an API key and a target that is no id', () => {
    const config = loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'key', Registry__CdnKeys: 'cdn-a, cdn-b', Registry__CdnTarget: 'prod', Registry__CompositionTimeoutMs: '5000', Registry__SupergraphHistory: '7' });
    expect(config.cdn).toEqual({ keys: ['cdn-a', 'cdn-b'], target: 'prod' });
    expect(config.federation).toMatchObject({ keepSupergraph: 7, leaseMs: 15_000 });
    expect(() => loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'old,key', Registry__CdnKeys: 'cdn,key' })).toThrow(/Registry__CdnKeys: must not contain a key of MONITOR_API_KEY/);
    expect(() => loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'key', Registry__CdnTarget: '../x' })).toThrow(/Registry__CdnTarget/);
  });

  it('should take the schema policy, history, topic and brokers, and refuse an unknown policy', () => {
    const config = loadConfig({
      STORE_URL: 'memory://',
      MONITOR_API_KEY: 'key',
      Registry__SchemaPolicy: 'reject-breaking',
      Registry__SchemaHistory: '5',
      Registry__SchemaTopic: 'schemas',
      MessageBroker__BrokerList: 'k1:9092,k2:9092',
    });
    expect(config.schemaPublishing).toEqual({ policy: 'reject-breaking', keep: 5, topic: 'schemas' });
    expect(config.brokers).toEqual(['k1:9092', 'k2:9092']);
    expect(() => loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'key', Registry__SchemaPolicy: 'maybe' })).toThrow(/Registry__SchemaPolicy/);
  });

  it('should take the schema check budget and the number of workers', () => {
    const config = loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'key', Registry__SchemaCheckTimeoutMs: '800', Registry__SchemaWorkers: '2' });
    expect(config.schemaChecker).toMatchObject({ timeBudgetMs: 800, workers: 2 });
  });

  it('should take overrides and a comma-separated key list for rotation', () => {
    const config = loadConfig({
      STORE_URL: 'rediss://:secret@redis.example.com:6380/2',
      MONITOR_API_KEY: ' old-key , new-key ',
      Registry__Port: '0',
      Registry__Host: '127.0.0.1',
      Management__Port: '19464',
      Log__Level: 'warn',
      Shutdown__GracePeriodMs: '3000',
      Otlp__Endpoint: 'http://collector:4318',
    });
    expect(config).toMatchObject({
      port: 0,
      host: '127.0.0.1',
      managementPort: 19464,
      store: { kind: 'redis', url: 'rediss://:secret@redis.example.com:6380/2' },
      apiKeys: ['old-key', 'new-key'],
      logLevel: 'warn',
      shutdownGraceMs: 3000,
    });
  });

  it('should choose the embedded store for memory://', () => {
    expect(loadConfig({ STORE_URL: 'memory://', MONITOR_API_KEY: 'key' }).store).toEqual({ kind: 'memory' });
  });
});
