import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { alertsOf, repositoryRunbookProblems, RULE_FILES, RUNBOOK_BASE_URL, runbookProblems, RUNBOOKS_PAGE } from '../../scripts/docs/runbooks.js';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const page = readFileSync(join(root, RUNBOOKS_PAGE), 'utf8');
const rules = RULE_FILES.flatMap((file) => alertsOf(readFileSync(join(root, file), 'utf8')).map((rule) => ({ file, rule })));

describe('runbooks (docs/runbooks.md)', () => {
  it('should give every alert of every rule file a runbook_url whose anchor is a section, and every section an alert', () => {
    expect(rules.length).toBeGreaterThan(10);
    expect(repositoryRunbookProblems(root)).toEqual([]);
    for (const { rule } of rules) expect(rule.annotations?.runbook_url).toBe(`${RUNBOOK_BASE_URL}#${rule.alert.toLowerCase()}`);
  });

  it("should ship the chart the same rules as observability/prometheus (its PrometheusRule template reads the copy)", () => {
    const [original, , copy] = RULE_FILES.map((file) => alertsOf(readFileSync(join(root, file), 'utf8')));
    expect(copy).toEqual(original);
  });

  it('should give each section what fired, the impact, three checks and the mitigations', () => {
    const sections = page.split(/^## /m).slice(1);
    expect(sections.length).toBe(new Set(rules.map(({ rule }) => rule.alert)).size);
    for (const section of sections) {
      const [title] = section.split('\n', 1);
      const checks = /\*\*Check:\*\*\n((?:\d\. .*\n)+)/.exec(section)?.[1]?.trim().split('\n') ?? [];
      expect({ title, fired: section.includes('**Fired:**'), impact: section.includes('**Impact:**'), checks: checks.length, mitigate: section.includes('**Mitigate:**') }).toEqual({ title, fired: true, impact: true, checks: 3, mitigate: true });
    }
  });

  it('should fail for an alert without runbook_url, an anchor that names no section, and a section without alert', () => {
    const [first, second] = rules;
    const stripped = { ...first!.rule, annotations: { summary: 's' } };
    const elsewhere = { ...second!.rule, annotations: { runbook_url: `${RUNBOOK_BASE_URL}#nosuchalert` } };
    const otherSite = { ...second!.rule, annotations: { runbook_url: `https://example.com/runbooks.md#${second!.rule.alert.toLowerCase()}` } };
    const problems = runbookProblems(
      [
        { file: 'a.yaml', rule: stripped },
        { file: 'a.yaml', rule: elsewhere },
        { file: 'a.yaml', rule: otherSite },
      ],
      `${page}\n## SubscriptionPlatformSomethingNew\n`,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        `a.yaml: ${first!.rule.alert} has no annotations.runbook_url`,
        `a.yaml: ${second!.rule.alert}: runbook_url anchor #nosuchalert names no section of docs/runbooks.md`,
        expect.stringMatching(/runbook_url https:\/\/example\.com\/runbooks\.md#\S+ is not https:/),
        'docs/runbooks.md: section "SubscriptionPlatformSomethingNew" has no alert whose runbook_url points at it',
      ]),
    );
  });
});
