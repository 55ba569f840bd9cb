// Dashboard and alert queries checked against a real Prometheus that scraped the running
// services: what the server answers, not what the files say.
import { queryParts, type Dashboard, type Query } from '../deploy/support/promql.js';
import type { PrometheusServer } from '../support/prometheus-server.js';

/** Values for a dashboard's template variables, as Grafana would substitute them. */
export interface DashboardVariables {
  namespace: string;
  pod: string;
  /** `$__rate_interval`: Grafana makes it at least four scrape intervals. */
  rateInterval: string;
}

/** The query with `$namespace`, `$pod` and Grafana's interval variables filled in. */
export function fillVariables(expr: string, variables: DashboardVariables): string {
  return expr
    .replace(/\$\{?__rate_interval\}?/g, variables.rateInterval)
    .replace(/\$\{?__interval\}?/g, variables.rateInterval)
    .replace(/\$\{?__range\}?/g, '1h')
    .replace(/\$\{?namespace\}?/g, variables.namespace)
    .replace(/\$\{?pod\}?/g, variables.pod);
}

/** The `pod` values a dashboard's `$pod` variable offers in `namespace` (its label_values query). */
export async function podChoices(prometheus: PrometheusServer, dashboard: Dashboard, namespace: string): Promise<string[]> {
  const variable = dashboard.templating.list.find((candidate) => candidate.name === 'pod');
  const text = typeof variable?.query === 'string' ? variable.query : (variable?.query?.query ?? '');
  const selector = /^label_values\((.+),\s*pod\)$/.exec(text.trim())?.[1];
  if (selector === undefined) throw new Error(`${dashboard.title}: $pod is not label_values(<selector>, pod): ${text}`);
  const series = await prometheus.series(selector.replace(/\$\{?namespace\}?/g, namespace));
  return [...new Set(series.map((labels) => labels.pod).filter((pod): pod is string => pod !== undefined))].sort();
}

/** Label names the series of one selector's metric carry (the service's own and the scrape's). */
async function labelNamesOf(prometheus: PrometheusServer, metric: string, service: string | undefined): Promise<Set<string>> {
  const match = service === undefined ? `{__name__=${JSON.stringify(metric)}}` : `{__name__=${JSON.stringify(metric)}, service=${JSON.stringify(service)}}`;
  const series = await prometheus.series(match);
  return new Set(series.flatMap((labels) => Object.keys(labels)));
}

/**
 * What is wrong with one query against the live server: refused by the server, no series in the
 * answer, a metric the services do not export, a label matcher or grouping label its metrics do
 * not carry. The metric and label checks also catch a broken operand that a guard such as
 * `or vector(0)` would hide from the answer.
 */
export async function liveQueryProblems(prometheus: PrometheusServer, query: Query, variables: DashboardVariables): Promise<string[]> {
  const expr = fillVariables(query.expr, variables);
  const problems: string[] = [];
  const answer = await prometheus.query(expr);
  if (answer.status !== 'success') problems.push(`${query.source}: refused by Prometheus (${answer.errorType}: ${answer.error})`);
  else if (answer.data.result.length === 0) problems.push(`${query.source}: no series`);
  const parts = queryParts(expr);
  const labels = new Set<string>();
  for (const selector of parts.selectors) {
    const service = selector.matchers.find((matcher) => matcher.label === 'service' && matcher.op === '=')?.value;
    const names = await labelNamesOf(prometheus, selector.metric, service);
    if (names.size === 0) problems.push(`${query.source}: no series of ${selector.metric}${service === undefined ? '' : ` from ${service}`}`);
    names.forEach((name) => labels.add(name));
    for (const matcher of selector.matchers.filter((candidate) => names.size > 0 && !names.has(candidate.label))) {
      problems.push(`${query.source}: ${selector.metric} has no label ${matcher.label}`);
    }
  }
  for (const label of parts.groupingLabels.filter((name) => !labels.has(name))) problems.push(`${query.source}: groups by ${label}, which none of its series carries`);
  return problems;
}
