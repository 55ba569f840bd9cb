import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from '@jest/globals';
import { parse } from 'yaml';
import { infra } from '../support/infra.js';
import type { K8sObject } from './support/helm.js';
import { prometheusOperatorValidators } from './support/k8s-schemas.js';
import { dashboardQueries, dashboards, panelsOf, queryParts, ruleGroups, rulesFile, type RuleGroups } from './support/promql.js';
import { repoRoot, services } from './support/service-config.js';

const run = promisify(execFile);
const prometheusDir = join(repoRoot, 'observability/prometheus');

async function promtool(args: string[], cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout, stderr } = await run(infra('PROMTOOL_BIN'), args, { cwd });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const failure = err as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failure.code === 'number' ? failure.code : 1, output: (failure.stdout ?? '') + (failure.stderr ?? '') };
  }
}

const allQueries = (): { file: string; exprs: string[] }[] =>
  dashboards().map(({ file, dashboard }) => ({ file, exprs: dashboardQueries(file, dashboard).map((q) => q.expr) }));

describe('Grafana dashboards', () => {
  it('should have one dashboard per service, each with a unique uid', () => {
    const all = dashboards();
    expect(all.map(({ file }) => file.replace(/\.json$/, '')).sort()).toEqual([...services].sort());
    expect(new Set(all.map(({ dashboard }) => dashboard.uid)).size).toBe(all.length);
  });

  it.each(dashboards().map(({ file }) => file))('should lay out %s with unique panel ids, data-source variables and parsable PromQL', (file) => {
    const { dashboard } = dashboards().find((d) => d.file === file)!;
    const panels = panelsOf(dashboard);
    expect(new Set(panels.map((p) => p.id)).size).toBe(panels.length);
    for (const panel of panels.filter((p) => p.type !== 'row')) {
      const raw = panel as unknown as { datasource: { uid: string }; gridPos: { x: number; w: number }; targets: { expr: string }[] };
      expect({ panel: panel.title, datasource: raw.datasource.uid }).toEqual({ panel: panel.title, datasource: '${datasource}' });
      expect(raw.gridPos.x + raw.gridPos.w).toBeLessThanOrEqual(24);
      expect(raw.targets.length).toBeGreaterThan(0);
    }
    expect(dashboard.templating.list.map((v) => v.name)).toEqual(['datasource', 'namespace', 'pod']);
    for (const expr of allQueries().find((q) => q.file === file)!.exprs) {
      expect({ expr, errors: queryParts(expr).errors }).toEqual({ expr, errors: [] });
    }
  });

  it.each(dashboards().map(({ file }) => file))('should select only its own service in %s', (file) => {
    const service = file.replace(/\.json$/, '');
    for (const expr of allQueries().find((q) => q.file === file)!.exprs) {
      for (const selector of queryParts(expr).selectors) {
        expect({ expr, service: selector.matchers.find((m) => m.label === 'service')?.value }).toEqual({ expr, service });
      }
    }
  });

  it('should show RED metrics, the cache hit ratio, OTP outcomes, webhook events by type and result, and controller reconciles', () => {
    const text = (service: string): string => allQueries().find((q) => q.file === `${service}.json`)!.exprs.join('\n');
    for (const service of ['auth', 'graph-registry', 'webhooks']) {
      expect(text(service)).toMatch(/rate\(http_requests_total\{[^}]*\}\[\$__rate_interval\]\)/);
      expect(text(service)).toMatch(/http_requests_total\{[^}]*status=~"5\.\."/);
      expect(text(service)).toMatch(/histogram_quantile\(0\.99, sum by \(le[^)]*\) \(rate\(http_request_duration_seconds_bucket/);
    }
    expect(text('cache')).toMatch(/sum\(rate\(cache_hits_total\{[^}]*\}\[\$__rate_interval\]\)\) \/ \(sum\(rate\(cache_hits_total[^/]*\+ sum\(rate\(cache_misses_total/);
    expect(text('cache')).toMatch(/grpc_server_handling_seconds_bucket/);
    expect(text('auth')).toMatch(/sum by \(result\) \(rate\(otp_verifications_total/);
    expect(text('webhooks')).toMatch(/sum by \(provider, type, result\) \(rate\(webhook_events_total/);
    expect(text('graph-controller')).toMatch(/sum by \(result\) \(rate\(graph_controller_reconciles_total/);
  });
});

describe('alert rules', () => {
  it('should pass promtool check rules', async () => {
    const result = await promtool(['check', 'rules', rulesFile], prometheusDir);
    expect(result.output).toMatch(/SUCCESS: \d+ rules found/);
    expect(result.code).toBe(0);
  });

  it('should pass their promtool unit tests, and fail a test whose expectation is wrong', async () => {
    const result = await promtool(['test', 'rules', 'alerts.test.yaml'], prometheusDir);
    expect(result.output).toContain('SUCCESS');
    expect(result.code).toBe(0);
    const dir = mkdtempSync(join(tmpdir(), 'sp-rules-'));
    try {
      cpSync(prometheusDir, dir, { recursive: true });
      const broken = readFileSync(join(dir, 'alerts.test.yaml'), 'utf8').replace('10% of HTTP requests', '11% of HTTP requests');
      writeFileSync(join(dir, 'alerts.test.yaml'), broken);
      expect((await promtool(['test', 'rules', 'alerts.test.yaml'], dir)).code).not.toBe(0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should cover error rate, latency, readiness, Kafka publish failures and webhook signature failures, each unit-tested', () => {
    const rules = ruleGroups().groups.flatMap((group) => group.rules);
    const byExpr = (pattern: RegExp): string[] => rules.filter((rule) => pattern.test(rule.expr)).map((rule) => rule.alert);
    expect(byExpr(/http_requests_total\{status=~"5\.\."\}/)).toHaveLength(1);
    expect(byExpr(/http_request_duration_seconds_bucket/)).toHaveLength(1);
    expect(byExpr(/kube_deployment_status_replicas_available/)).toHaveLength(1);
    expect(byExpr(/kafka_publish_failures_total/)).toHaveLength(1);
    expect(byExpr(/webhook_signature_failures_total/)).toHaveLength(1);
    const tests = readFileSync(join(prometheusDir, 'alerts.test.yaml'), 'utf8');
    for (const rule of rules) {
      expect({ alert: rule.alert, severity: rule.labels?.severity, summary: Boolean(rule.annotations?.summary), description: Boolean(rule.annotations?.description), tested: tests.includes(`alertname: ${rule.alert}`) }).toEqual({
        alert: rule.alert,
        severity: expect.stringMatching(/^(critical|warning)$/),
        summary: true,
        description: true,
        tested: true,
      });
    }
  });

  it('should ship the same groups as a PrometheusRule that the prometheus-operator CRD accepts', () => {
    const rule = parse(readFileSync(join(prometheusDir, 'prometheus-rule.yaml'), 'utf8')) as K8sObject & { spec: RuleGroups };
    expect(rule.kind).toBe('PrometheusRule');
    expect(prometheusOperatorValidators().PrometheusRule(rule)).toEqual([]);
    expect(rule.spec.groups).toEqual(ruleGroups().groups);
  });
});

describe('OpenTelemetry Collector example', () => {
  interface CollectorConfig {
    receivers: Record<string, { protocols?: { http?: { endpoint: string } }; config?: { scrape_configs: { honor_labels: boolean; relabel_configs: { regex?: string; source_labels?: string[] }[] }[] } }>;
    processors: Record<string, unknown>;
    exporters: Record<string, unknown>;
    extensions: Record<string, unknown>;
    service: { extensions: string[]; pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
  }
  const config = parse(readFileSync(join(repoRoot, 'observability/otel-collector/config.yaml'), 'utf8')) as CollectorConfig;

  it('should define every component its pipelines use, and use every one it defines', () => {
    const used = { receivers: new Set<string>(), processors: new Set<string>(), exporters: new Set<string>() };
    for (const pipeline of Object.values(config.service.pipelines)) {
      for (const kind of ['receivers', 'processors', 'exporters'] as const) pipeline[kind].forEach((name) => used[kind].add(name));
    }
    for (const kind of ['receivers', 'processors', 'exporters'] as const) expect([...used[kind]].sort()).toEqual(Object.keys(config[kind]).sort());
    expect(config.service.extensions.sort()).toEqual(Object.keys(config.extensions).sort());
    expect(config.service.pipelines.traces!.processors.at(0)).toBe('memory_limiter');
    expect(config.service.pipelines.traces!.processors.at(-1)).toBe('batch');
  });

  it('should receive OTLP/HTTP on the port the services export to, and scrape their management port keeping their labels', () => {
    expect(config.receivers.otlp!.protocols!.http!.endpoint).toMatch(/:4318$/);
    const full = parse(readFileSync(join(repoRoot, 'charts/subscription-platform/ci/full-values.yaml'), 'utf8')) as { global: { otlpEndpoint: string } };
    expect(new URL(full.global.otlpEndpoint).port).toBe('4318');
    const scrape = config.receivers.prometheus!.config!.scrape_configs[0]!;
    expect(scrape.honor_labels).toBe(true);
    expect(scrape.relabel_configs).toContainEqual(expect.objectContaining({ source_labels: ['__meta_kubernetes_pod_container_port_name'], regex: 'management' }));
  });
});
