import { queryParts, type Query, type Selector } from './promql.js';

/** What the running services expose, by series name (a histogram `x` gives x_bucket, x_sum, x_count). */
export interface SeriesInfo {
  family: string;
  type: string;
  services: Set<string>;
  /** Label names seen on samples (empty until a labelled metric is first incremented). */
  labels: Set<string>;
  sampled: boolean;
}

export type Catalog = Map<string, SeriesInfo>;

/**
 * Metrics that do not come from the services, each with where it comes from: the readiness and
 * scrape-health alerts use them because a pod that is not ready or not running cannot report it.
 */
export const EXTERNAL_METRICS: Readonly<Record<string, string>> = {
  up: 'Prometheus, for every scrape target',
  kube_deployment_spec_replicas: 'kube-state-metrics',
  kube_deployment_status_replicas_available: 'kube-state-metrics',
};

/** Labels Prometheus adds to every scraped series (target labels); not the services' to export. */
export const TARGET_LABELS = new Set(['namespace', 'pod', 'job', 'instance', 'container', 'endpoint']);

const SUFFIXES: Record<string, string[]> = { histogram: ['_bucket', '_sum', '_count'], summary: ['', '_sum', '_count'] };

/** Adds one service's /metrics text (Prometheus exposition format) to the catalog. */
export function addExposition(catalog: Catalog, service: string, text: string): void {
  for (const match of text.matchAll(/^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (\w+)$/gm)) {
    const [, family, type] = match as unknown as [string, string, string];
    for (const suffix of SUFFIXES[type] ?? ['']) {
      const name = family + suffix;
      const info = catalog.get(name) ?? { family, type, services: new Set<string>(), labels: new Set<string>(), sampled: false };
      info.services.add(service);
      catalog.set(name, info);
    }
  }
  for (const match of text.matchAll(/^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([^}]*)\})? \S+$/gm)) {
    const info = catalog.get(match[1]!);
    if (!info) continue;
    info.sampled = true;
    for (const label of (match[3] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="/g)) info.labels.add(label[1]!);
  }
}

/** Problems of one selector; adds the labels its metric carries to `labels`. */
function selectorProblems(source: string, selector: Selector, catalog: Catalog, labels: Set<string>): string[] {
  if (EXTERNAL_METRICS[selector.metric]) {
    selector.matchers.forEach((m) => labels.add(m.label));
    return [];
  }
  const info = catalog.get(selector.metric);
  if (!info) return [`${source}: no service exports ${selector.metric}`];
  const problems: string[] = [];
  const service = selector.matchers.find((m) => m.label === 'service' && m.op === '=');
  if (service && !info.services.has(service.value)) problems.push(`${source}: ${service.value} does not export ${selector.metric} (exported by ${[...info.services].join(', ')})`);
  info.labels.forEach((label) => labels.add(label));
  labels.add('service');
  for (const matcher of selector.matchers.filter((m) => !TARGET_LABELS.has(m.label) && m.label !== 'service')) {
    if (!info.sampled) problems.push(`${source}: ${selector.metric} had no samples, so its label ${matcher.label} is unverified (drive traffic that records it)`);
    else if (!info.labels.has(matcher.label)) problems.push(`${source}: ${selector.metric} has no label ${matcher.label} (it has ${[...info.labels].join(', ') || 'none'})`);
  }
  return problems;
}

/**
 * Problems of dashboard and alert queries against what the services export: unparsable queries,
 * metrics no service exports, a `service="x"` selector on a metric x does not export, label
 * matchers and grouping labels the metric does not carry.
 */
export function queryProblems(queries: readonly Query[], catalog: Catalog): string[] {
  const problems: string[] = [];
  for (const { source, expr } of queries) {
    const parts = queryParts(expr);
    problems.push(...parts.errors.map((error) => `${source}: ${error}`));
    if (parts.selectors.length === 0) problems.push(`${source}: names no metric`);
    const labels = new Set<string>(TARGET_LABELS);
    for (const selector of parts.selectors) problems.push(...selectorProblems(source, selector, catalog, labels));
    for (const label of parts.groupingLabels.filter((l) => !labels.has(l))) problems.push(`${source}: groups by ${label}, which none of its metrics carries`);
  }
  return [...new Set(problems)];
}
