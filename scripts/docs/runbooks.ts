import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { anchorsOf } from './markdown.js';

/** Where `runbook_url` points by default: the runbooks page at the project's home (Chart.yaml `home`). */
export const RUNBOOK_BASE_URL = 'https://github.com/subscription-platform/subscription-platform/blob/main/docs/runbooks.md';
/** The page in the repository that the base URL names. */
export const RUNBOOKS_PAGE = 'docs/runbooks.md';

export interface AlertRule {
  alert: string;
  annotations?: Record<string, string>;
}

interface RuleGroups {
  groups: { name: string; rules: (AlertRule | { record: string })[] }[];
}

/** The rule files that carry alerts: the plain rule file, the PrometheusRule manifest, and the chart's copy. */
export const RULE_FILES = ['observability/prometheus/alerts.rules.yaml', 'observability/prometheus/prometheus-rule.yaml', 'charts/subscription-platform/files/alerts.rules.yaml'];

/** The alerting rules of a rule file or a PrometheusRule (`spec.groups`). */
export function alertsOf(text: string): AlertRule[] {
  const document = parse(text) as RuleGroups | { spec: RuleGroups };
  const groups = 'spec' in document ? document.spec.groups : document.groups;
  return groups.flatMap((group) => group.rules).filter((rule): rule is AlertRule => 'alert' in rule);
}

/**
 * What is wrong between alerts and runbooks: an alert without `runbook_url`, a URL that is not
 * `<base>#<anchor>`, an anchor that names no section of the runbooks page, and a section (`##`) of
 * the page that no alert points at.
 */
export function runbookProblems(alerts: readonly { file: string; rule: AlertRule }[], page: string, base = RUNBOOK_BASE_URL): string[] {
  const anchors = anchorsOf(page);
  const problems: string[] = [];
  const used = new Set<string>();
  for (const { file, rule } of alerts) {
    const url = rule.annotations?.runbook_url;
    if (url === undefined) {
      problems.push(`${file}: ${rule.alert} has no annotations.runbook_url`);
      continue;
    }
    const anchor = url.startsWith(`${base}#`) ? url.slice(base.length + 1) : undefined;
    if (anchor === undefined) problems.push(`${file}: ${rule.alert}: runbook_url ${url} is not ${base}#<section>`);
    else if (!anchors.has(anchor)) problems.push(`${file}: ${rule.alert}: runbook_url anchor #${anchor} names no section of ${RUNBOOKS_PAGE}`);
    else used.add(anchor);
  }
  for (const [, heading] of page.matchAll(/^## (.+)$/gm)) {
    const anchor = [...anchorsOf(`## ${heading}`)][0]!;
    if (!used.has(anchor)) problems.push(`${RUNBOOKS_PAGE}: section "${heading}" has no alert whose runbook_url points at it`);
  }
  return problems;
}

/** The repository's alerts (every rule file that exists) against its runbooks page. */
export function repositoryRunbookProblems(root: string): string[] {
  const alerts = RULE_FILES.filter((file) => existsSync(join(root, file))).flatMap((file) => alertsOf(readFileSync(join(root, file), 'utf8')).map((rule) => ({ file, rule })));
  if (!existsSync(join(root, RUNBOOKS_PAGE))) return alerts.length === 0 ? [] : [`${RUNBOOKS_PAGE}: missing, while ${alerts.length} alerts point into it`];
  return runbookProblems(alerts, readFileSync(join(root, RUNBOOKS_PAGE), 'utf8'));
}
