import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { prepareCharts, type Charts } from './support/helm.js';
import { chartsDir, expectedSchemas, formatSchema, paramDocs, readValues, subcharts } from './support/values-schema.js';

/** Dotted paths of every value, and of every map or list, in a values tree. */
function valuePaths(values: Record<string, unknown>, prefix = ''): string[] {
  return Object.entries(values).flatMap(([key, value]) => {
    const path = prefix === '' ? key : `${prefix}.${key}`;
    const nested = value !== null && typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length > 0;
    return nested ? [path, ...valuePaths(value as Record<string, unknown>, path)] : [path];
  });
}

interface ChartYaml {
  name: string;
  version: string;
  appVersion?: string;
  kubeVersion?: string;
  type?: string;
  dependencies?: { name: string; version: string; repository?: string; condition?: string }[];
}

const chartYaml = (dir: string): ChartYaml => parse(readFileSync(join(dir, 'Chart.yaml'), 'utf8')) as ChartYaml;
const chartDirs = [chartsDir, ...subcharts.map((name) => join(chartsDir, 'charts', name))];

describe('values.yaml and values.schema.json', () => {
  it('should match the schema generated from values.yaml for every chart (regenerate: node test/deploy/support/write-values-schemas.ts)', () => {
    for (const { file, schema } of expectedSchemas()) {
      expect({ file, content: readFileSync(file, 'utf8') }).toEqual({ file, content: formatSchema(schema) });
    }
  });

  it.each(chartDirs)('should document every value of %s with a ## @param line, and nothing else', (dir) => {
    const { values, text } = readValues(dir);
    const docs = paramDocs(text);
    const paths = valuePaths(values);
    const undocumented = paths.filter((path) => {
      const parts = path.split('.');
      const covered = parts.some((_, i) => docs.has(parts.slice(0, i + 1).join('.')));
      const isParent = paths.some((other) => other.startsWith(`${path}.`));
      return !covered && !isParent;
    });
    expect(undocumented).toEqual([]);
    expect([...docs.keys()].filter((path) => !paths.includes(path))).toEqual([]);
  });

  it('should be strict: every object the chart owns refuses unknown keys', () => {
    const loose: string[] = [];
    const walk = (schema: Record<string, unknown>, path: string): void => {
      if (schema.type === 'object' && schema.properties) {
        if (schema.additionalProperties !== false) loose.push(path);
        for (const [key, child] of Object.entries(schema.properties as Record<string, Record<string, unknown>>)) walk(child, `${path}.${key}`);
      }
    };
    for (const { file, schema } of expectedSchemas()) walk(schema, file.replace(`${chartsDir}/`, ''));
    expect(loose).toEqual([]);
  });

  it('should never hold a secret value by default: secrets are named through existingSecret only', () => {
    for (const dir of chartDirs) {
      const { values } = readValues(dir);
      const paths = valuePaths(values);
      // Values that name a Secret (or a token mount switch) are not secrets themselves.
      const references = /(existingSecret|tlsSecret|automountServiceAccountToken)$/;
      expect(paths.filter((path) => /(password|secret|token|apikey)$/i.test(path) && !references.test(path) && !path.startsWith('secretKeys.'))).toEqual([]);
      if ('existingSecret' in values) expect(values.existingSecret).toBe('');
      // secretKeys name the keys inside the existing Secret: variable names, never values.
      for (const key of Object.values((values.secretKeys ?? {}) as Record<string, string>)) expect(key).toMatch(/^[A-Za-z][A-Za-z0-9_]*$/);
    }
  });
});

describe('Chart.yaml files', () => {
  it('should list each subchart in the umbrella with a condition and the platform library in each subchart', () => {
    const umbrella = chartYaml(chartsDir);
    for (const name of subcharts) {
      const sub = chartYaml(join(chartsDir, 'charts', name));
      expect(umbrella.dependencies).toContainEqual({ name, version: sub.version, condition: `${name}.enabled` });
      expect(sub.dependencies).toEqual([{ name: 'platform-lib', version: chartYaml(join(chartsDir, 'charts/platform-lib')).version, repository: 'file://../platform-lib' }]);
      expect({ name, appVersion: sub.appVersion, kubeVersion: sub.kubeVersion }).toEqual({ name, appVersion: umbrella.appVersion, kubeVersion: umbrella.kubeVersion });
    }
    expect(chartYaml(join(chartsDir, 'charts/platform-lib')).type).toBe('library');
  });
});

describe('NOTES.txt', () => {
  let charts: Charts;
  beforeAll(async () => {
    charts = await prepareCharts();
  }, 60_000);
  afterAll(() => charts?.close());

  it('should tell how to port-forward to each enabled component', async () => {
    const result = await charts.helm(['install', 'sp', charts.umbrella, '--dry-run=client', '--namespace', 'platform', '-f', join(charts.umbrella, 'ci/minimal-values.yaml')]);
    expect(result.stderr).toBe('');
    const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
    for (const line of [
      'kubectl -n platform port-forward svc/sp-cache 7777:7777 9464:9464',
      'kubectl -n platform port-forward svc/sp-auth 5555:5555 9465:9464',
      'kubectl -n platform port-forward svc/sp-graph-registry 5145:5145 9466:9464',
      'kubectl -n platform port-forward svc/sp-webhooks 5000:5000 9467:9464',
      'kubectl -n platform port-forward svc/sp-graph-controller 9468:9464',
    ]) {
      expect(notes).toContain(line);
    }
    expect(notes).toContain('NOTE: the cache uses the memory backend');
  });

  it('should tell what Subscribe needs of a Redis-backed cache: keyspace notifications, set by the cache or stated in the values', async () => {
    const notes = async (set: string[]): Promise<string> => {
      const result = await charts.helm(['install', 'sp', charts.umbrella, '--dry-run=client', '--namespace', 'platform', '--set', 'cache.backend=redis', '--set', 'cache.redis.url=redis://redis:6379', ...set.flatMap((pair) => ['--set', pair])]);
      expect(result.stderr).toBe('');
      return result.stdout.slice(result.stdout.indexOf('NOTES:'));
    };
    const byTheCache = await notes([]);
    expect(byTheCache).toContain('notify-keyspace-events including K$gxe on every Redis node');
    expect(byTheCache).toContain('The cache sets them itself with CONFIG SET');
    expect(await notes(['cache.redis.notifyKeyspaceEvents=KEA'])).toContain('cache.redis.notifyKeyspaceEvents says they are set to "KEA"');
  });

  it('should name the components left disabled and how to enable them', async () => {
    const result = await charts.helm(['install', 'sp', charts.umbrella, '--dry-run=client', '--namespace', 'platform']);
    expect(result.stdout).toContain('To deploy auth, graph-registry, webhooks, graph-controller: create each one');
    const alone = await charts.helm(['install', 'c', charts.subchart('cache'), '--dry-run=client', '--namespace', 'platform']);
    expect(alone.stdout).toContain('kubectl -n platform port-forward svc/c-cache 7777:7777 9464:9464');
  });
});
