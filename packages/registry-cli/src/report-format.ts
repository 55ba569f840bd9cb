import type { SchemaChangeCounts, SchemaChangeReport, SchemaVersionInfo } from '@sp/graphs';

export interface Problem {
  message: string;
  locations: Array<{ line: number; column: number }>;
}

const LABEL = { breaking: 'BREAKING', dangerous: 'DANGEROUS', safe: 'safe' } as const;

const pad = (text: string, width: number): string => text.padEnd(width);

export const countsLine = (counts: SchemaChangeCounts): string => `${counts.breaking} breaking, ${counts.dangerous} dangerous, ${counts.safe} safe`;

/** The report as aligned lines, one change a line, breaking first. */
export function formatReport(report: SchemaChangeReport, against: number | null): string {
  const head = against === null ? 'No earlier version to compare with.' : `Compared with version ${against}: ${countsLine(report.counts)}.`;
  if (report.changes.length === 0) return against === null ? head : `${head}\nNo changes.`;
  const kindWidth = Math.max(...report.changes.map((change) => change.kind.length));
  const coordinateWidth = Math.max(...report.changes.map((change) => (change.coordinate ?? '-').length));
  const lines = report.changes.map(
    (change) => `  ${pad(LABEL[change.class], 9)}  ${pad(change.kind, kindWidth)}  ${pad(change.coordinate ?? '-', coordinateWidth)}  ${change.message}`,
  );
  return [head, ...lines].join('\n');
}

/** The problems of an invalid schema as `FILE:LINE:COLUMN  message`. */
export function formatProblems(file: string, problems: readonly Problem[]): string {
  const lines = problems.map((problem) => {
    const at = problem.locations[0];
    return `  ${at === undefined ? file : `${file}:${at.line}:${at.column}`}  ${problem.message}`;
  });
  return ['The schema is invalid:', ...lines].join('\n');
}

export function formatVersion(version: SchemaVersionInfo): string {
  const rollback = version.rollbackOf === null ? '' : ` (rollback of ${version.rollbackOf})`;
  return `${pad(`v${version.version}`, 6)} ${version.publishedAt}  ${version.sha256.slice(0, 12)}  ${pad(version.publisher, 20)}  ${countsLine(version.counts)}${rollback}`;
}
