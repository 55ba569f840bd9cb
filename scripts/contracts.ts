/**
 * `make contracts` (docs/releasing.md): compares the contracts of this tree with the previous
 * release's (release/previous) and fails on a breaking change that no "Upgrading" entry of the
 * CHANGELOG's Unreleased section names:
 *
 *   npx tsx scripts/contracts.ts [--root DIR]
 *
 * DIR (default: this checkout) is the tree whose contracts and CHANGELOG.md are checked; the
 * previous release's files come from this checkout's git history. buf and oasdiff: BUF_BIN and
 * OASDIFF_BIN, else .cache/bin (test/infra/release-tools.sh install).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { asyncapiFindings, openapiFindings, protoFindings, valuesFindings } from './release/contract-checks.js';
import { extractContracts, previousRelease } from './release/previous.js';
import { unannounced } from './release/upgrading.js';

const repo = fileURLToPath(new URL('..', import.meta.url)).replace(/\/$/, '');
const rootArg = process.argv.indexOf('--root');
const root = rootArg === -1 ? repo : process.argv[rootArg + 1]!;
const tool = (name: string, variable: string): string => process.env[variable] ?? join(repo, '.cache/bin', name);

const previous = previousRelease(root);
const dir = mkdtempSync(join(tmpdir(), 'sp-contracts-'));
try {
  extractContracts(repo, previous.commit, dir);
  const findings = [
    ...(await protoFindings(tool('buf', 'BUF_BIN'), dir, root)),
    ...(await openapiFindings(tool('oasdiff', 'OASDIFF_BIN'), dir, root)),
    ...asyncapiFindings(dir, root),
    ...valuesFindings(dir, root),
  ];
  const missing = unannounced(findings, readFileSync(join(root, 'CHANGELOG.md'), 'utf8'));
  for (const finding of findings) console.log(`${missing.includes(finding) ? 'BREAKING, not announced' : 'breaking, announced'}: ${finding.change}`);
  for (const finding of missing) {
    console.error(`${finding.change}\n  → a breaking change since ${previous.version}: name \`${finding.subject}\` in an "Upgrading" entry of CHANGELOG.md's [Unreleased] section, saying what an operator must do`);
  }
  console.log(`contracts against ${previous.version} (${previous.commit.slice(0, 12)}): ${findings.length} breaking change(s), ${missing.length} not announced`);
  process.exitCode = missing.length > 0 ? 1 : 0;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
