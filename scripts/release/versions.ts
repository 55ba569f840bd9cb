/**
 * The platform's version and every file that repeats it. The one source is the `version` of the
 * root package.json (docs/releasing.md says why); the umbrella chart's `version` and
 * `appVersion`, each component chart's `appVersion` (the default image tag of its Deployment:
 * platform-lib's `imageTag` falls back to the chart's own appVersion), the image tag of the plain
 * manifests in k8s/ and the lock file's copy follow it. `setVersion` writes them all, `versionProblems` names every one that differs.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { SEMVER } from '@sp/observability';

const UMBRELLA = 'charts/subscription-platform';

/** A copy of the version: the file, the field's name and the pattern whose first group holds it. */
interface Copy {
  file: string;
  field: string;
  pattern: RegExp;
}

/** The component charts: every subchart with an appVersion (the library chart has none). */
function componentCharts(root: string): string[] {
  return readdirSync(join(root, UMBRELLA, 'charts'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => `${UMBRELLA}/charts/${entry.name}/Chart.yaml`)
    .filter((file) => /^appVersion:/m.test(readFileSync(join(root, file), 'utf8')));
}

function copies(root: string): Copy[] {
  const version = /^version: *"?([^"\s]+)"? *$/m;
  const appVersion = /^appVersion: *"?([^"\s]+)"? *$/m;
  return [
    { file: `${UMBRELLA}/Chart.yaml`, field: 'version', pattern: version },
    { file: `${UMBRELLA}/Chart.yaml`, field: 'appVersion', pattern: appVersion },
    ...componentCharts(root).map((file) => ({ file, field: 'appVersion', pattern: appVersion })),
    // The plain manifests of k8s/ (the controller without the chart) pin the same image tag.
    { file: 'k8s/graph-controller/deployment.yaml', field: 'the image tag', pattern: /^ +image: subscription-platform\/graph-controller:([^\s"]+)$/m },
    // npm writes the root package's version into the lock file twice: at the top and under "".
    { file: 'package-lock.json', field: 'version', pattern: /^ {2}"version": "([^"]*)",$/m },
    { file: 'package-lock.json', field: 'packages[""].version', pattern: /^ {4}"": \{\n {6}"name": "subscription-platform",\n {6}"version": "([^"]*)",$/m },
  ];
}

/** The version in the root package.json (not checked: see versionProblems). */
export function platformVersionOf(root: string): string {
  const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version?: unknown };
  return typeof manifest.version === 'string' ? manifest.version : '';
}

/** A version without a pre-release part (`1.2.0`, not `1.2.0-dev`) is a release. */
export function isRelease(version: string): boolean {
  return SEMVER.test(version) && !version.includes('-');
}

/** Every place that disagrees with the root package.json, and a CHANGELOG that does not fit the version. */
export function versionProblems(root: string): string[] {
  const version = platformVersionOf(root);
  if (!SEMVER.test(version)) return [`package.json: "version" must be a semantic version (MAJOR.MINOR.PATCH[-PRERELEASE]), not ${JSON.stringify(version)}`];
  const problems: string[] = [];
  for (const copy of copies(root)) {
    const found = copy.pattern.exec(readFileSync(join(root, copy.file), 'utf8'))?.[1];
    if (found !== version) problems.push(`${copy.file}: ${copy.field} is ${found ?? 'missing'}, the platform's version (package.json) is ${version}: run \`npx tsx scripts/version.ts set ${version}\``);
  }
  const changelog = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  if (isRelease(version) && !new RegExp(`^## \\[${version.replace(/\./g, '\\.')}\\] - \\d{4}-\\d{2}-\\d{2}$`, 'm').test(changelog)) {
    problems.push(`CHANGELOG.md: no "## [${version}] - YYYY-MM-DD" section for the release ${version} (package.json)`);
  }
  return problems;
}

/** Writes `version` into the root package.json and every copy. */
export function setVersion(root: string, version: string): void {
  if (!SEMVER.test(version)) throw new Error(`not a semantic version: ${version}`);
  const manifestPath = join(root, 'package.json');
  const manifest = readFileSync(manifestPath, 'utf8');
  writeFileSync(manifestPath, manifest.replace(/^( {2}"version": ")[^"]*(",)$/m, `$1${version}$2`));
  for (const copy of copies(root)) {
    const path = join(root, copy.file);
    const text = readFileSync(path, 'utf8');
    const match = copy.pattern.exec(text);
    if (match === null) throw new Error(`${copy.file}: no ${copy.field} to set`);
    const at = match.index + match[0].lastIndexOf(match[1]!);
    writeFileSync(path, text.slice(0, at) + version + text.slice(at + match[1]!.length));
  }
}
