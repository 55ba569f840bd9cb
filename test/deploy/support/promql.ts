import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { parser } from '@prometheus-io/lezer-promql';
import { parse } from 'yaml';
import { repoRoot } from './service-config.js';

/** One `metric{label op "value", ...}` of a query. */
export interface Selector {
  metric: string;
  matchers: { label: string; op: string; value: string }[];
}

export interface QueryParts {
  selectors: Selector[];
  /** Labels of by/without/on/ignoring clauses. */
  groupingLabels: string[];
  /** Parse errors, with their position. */
  errors: string[];
}

/** A query as it appears in a dashboard or an alert, with where it comes from. */
export interface Query {
  source: string;
  expr: string;
}

const GRAFANA_VARIABLES = /\$__(rate_interval|interval|range)|\$\{__(rate_interval|interval|range)\}/g;

function unquote(literal: string): string {
  return literal.slice(1, -1).replace(/\\(.)/g, '$1');
}

type Node = ReturnType<ReturnType<typeof parser.parse>['topNode']['getChild']> & object;

/** `metric{label op "value", ...}` of a VectorSelector node. */
function selectorOf(node: Node, text: string): Selector {
  const slice = (n: { from: number; to: number }): string => text.slice(n.from, n.to);
  const identifier = node.getChild('Identifier');
  const selector: Selector = { metric: identifier ? slice(identifier) : '', matchers: [] };
  for (const matcher of node.getChild('LabelMatchers')?.getChildren('UnquotedLabelMatcher') ?? []) {
    const [label, op, value] = [matcher.getChild('LabelName'), matcher.getChild('MatchOp'), matcher.getChild('StringLiteral')];
    if (label && op && value) selector.matchers.push({ label: slice(label), op: slice(op), value: unquote(slice(value)) });
  }
  return selector;
}

/** The selectors and grouping labels of a PromQL expression (Grafana's range variables read as 5m). */
export function queryParts(expr: string): QueryParts {
  const text = expr.replace(GRAFANA_VARIABLES, '5m');
  const parts: QueryParts = { selectors: [], groupingLabels: [], errors: [] };
  parser.parse(text).iterate({
    enter(node) {
      if (node.type.isError) parts.errors.push(`parse error at ${node.from}: ${JSON.stringify(text.slice(Math.max(0, node.from - 20), node.to + 20))}`);
      if (node.name === 'VectorSelector') parts.selectors.push(selectorOf(node.node, text));
      if (node.name === 'GroupingLabels') parts.groupingLabels.push(...node.node.getChildren('LabelName').map((label) => text.slice(label.from, label.to)));
    },
  });
  return parts;
}

export const dashboardsDir = join(repoRoot, 'observability/grafana/dashboards');
export const rulesFile = join(repoRoot, 'observability/prometheus/alerts.rules.yaml');

interface Panel {
  id: number;
  title: string;
  type: string;
  targets?: { expr?: string; refId: string }[];
  panels?: Panel[];
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: Panel[];
  templating: { list: { name: string; type: string; query?: string | { query: string } }[] };
}

export function dashboards(): { file: string; dashboard: Dashboard }[] {
  return readdirSync(dashboardsDir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, dashboard: JSON.parse(readFileSync(join(dashboardsDir, file), 'utf8')) as Dashboard }));
}

export function panelsOf(dashboard: Dashboard): Panel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every PromQL query of a dashboard: panel targets and template variable queries (label_values' selector). */
export function dashboardQueries(file: string, dashboard: Dashboard): Query[] {
  const queries: Query[] = [];
  for (const panel of panelsOf(dashboard)) {
    for (const target of panel.targets ?? []) queries.push({ source: `${file} panel "${panel.title}" ${target.refId}`, expr: target.expr ?? '' });
  }
  for (const variable of dashboard.templating.list.filter((v) => v.type === 'query')) {
    const text = typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '');
    const labelValues = /^label_values\((.+),\s*[a-zA-Z_][a-zA-Z0-9_]*\)$/.exec(text.trim());
    queries.push({ source: `${file} variable $${variable.name}`, expr: labelValues ? labelValues[1]! : text });
  }
  return queries;
}

export interface AlertRule {
  alert: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}

export interface RuleGroups {
  groups: { name: string; rules: AlertRule[] }[];
}

export function ruleGroups(): RuleGroups {
  return parse(readFileSync(rulesFile, 'utf8')) as RuleGroups;
}

export function alertQueries(): Query[] {
  return ruleGroups().groups.flatMap((group) => group.rules.map((rule) => ({ source: `alert ${rule.alert}`, expr: rule.expr })));
}
