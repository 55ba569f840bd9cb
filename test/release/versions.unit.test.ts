import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from '@jest/globals';
import { platformVersion } from '@sp/observability';
import { platformVersionOf, setVersion, versionProblems } from '../../scripts/release/versions.js';

const repoRoot = join(import.meta.dirname, '../..');
const CHART = 'charts/subscription-platform';
let copy: string | undefined;

/** The files the check reads, copied: the test edits them. */
function copyOfRepository(): string {
  copy = mkdtempSync(join(tmpdir(), 'versions-'));
  for (const path of ['package.json', 'package-lock.json', 'CHANGELOG.md', 'k8s', CHART]) cpSync(join(repoRoot, path), join(copy, path), { recursive: true });
  return copy;
}

afterEach(() => {
  if (copy !== undefined) rmSync(copy, { recursive: true, force: true });
  copy = undefined;
});

describe('the platform version', () => {
  it('should be the same in package.json, the lock file, the umbrella chart and every component chart', () => {
    expect(versionProblems(repoRoot)).toEqual([]);
  });

  it('should be what the services read at run time (build info, first log line)', () => {
    expect(platformVersion()).toBe(platformVersionOf(repoRoot));
  });

  it('should name each copy that differs and say how to fix it', () => {
    const root = copyOfRepository();
    const chart = join(root, CHART, 'charts/auth/Chart.yaml');
    writeFileSync(chart, readFileSync(chart, 'utf8').replace(/^appVersion: .*$/m, 'appVersion: "9.9.9"'));
    const version = platformVersionOf(root);
    expect(versionProblems(root)).toEqual([
      `${CHART}/charts/auth/Chart.yaml: appVersion is 9.9.9, the platform's version (package.json) is ${version}: run \`npx tsx scripts/version.ts set ${version}\``,
    ]);
  });

  it('should write a new version everywhere at once, the library chart and the components\' own chart versions left alone', () => {
    const root = copyOfRepository();
    const before = readFileSync(join(root, CHART, 'charts/auth/Chart.yaml'), 'utf8');
    setVersion(root, '7.8.9-rc.1');
    expect(platformVersionOf(root)).toBe('7.8.9-rc.1');
    expect(versionProblems(root)).toEqual([]);
    const umbrella = readFileSync(join(root, CHART, 'Chart.yaml'), 'utf8');
    expect(umbrella).toMatch(/^version: 7\.8\.9-rc\.1$/m);
    expect(umbrella).toMatch(/^appVersion: "7\.8\.9-rc\.1"$/m);
    expect(readFileSync(join(root, CHART, 'charts/auth/Chart.yaml'), 'utf8')).toBe(before.replace(/^appVersion: .*$/m, 'appVersion: "7.8.9-rc.1"'));
  });

  it('should refuse a release version without its dated CHANGELOG section, and a version that is not semver', () => {
    const root = copyOfRepository();
    setVersion(root, '7.8.9');
    expect(versionProblems(root)).toEqual(['CHANGELOG.md: no "## [7.8.9] - YYYY-MM-DD" section for the release 7.8.9 (package.json)']);
    const changelog = join(root, 'CHANGELOG.md');
    writeFileSync(changelog, readFileSync(changelog, 'utf8').replace('## [Unreleased]', '## [Unreleased]\n\n## [7.8.9] - 2027-01-05'));
    expect(versionProblems(root)).toEqual([]);
    expect(() => setVersion(root, 'v1.2')).toThrow('not a semantic version');
    const manifest = join(root, 'package.json');
    writeFileSync(manifest, readFileSync(manifest, 'utf8').replace('"7.8.9"', '"1.2.3+build.4"'));
    expect(versionProblems(root)[0]).toMatch(/^package\.json: "version" must be a semantic version/);
  });
});
