/**
 * The CHANGELOG's announcements of the next release: what the "Upgrading" group of the
 * `## [Unreleased]` section names in backticks, and which breaking changes they cover.
 */
import type { Finding } from './contract-checks.js';

/** The backticked names of the Upgrading group of `## [Unreleased]`. */
export function announcedNames(changelog: string): Set<string> {
  const unreleased = /^## \[Unreleased\][^\n]*\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(changelog)?.[1] ?? '';
  const upgrading = /^### Upgrading[^\n]*\n([\s\S]*?)(?=^### |(?![\s\S]))/m.exec(unreleased)?.[1] ?? '';
  return new Set([...upgrading.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!.trim()));
}

/** The findings no Upgrading entry names. */
export function unannounced(findings: readonly Finding[], changelog: string): Finding[] {
  const names = announcedNames(changelog);
  return findings.filter((finding) => !names.has(finding.subject));
}
