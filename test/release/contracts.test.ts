import { execFile } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { openapiDocuments } from '../../scripts/release/contract-checks.js';
import { infra } from '../support/infra.js';

/**
 * `make contracts` with the real buf and oasdiff (test/infra/release-tools.sh), against the
 * previous release of release/previous: this tree passes; a copy with a breaking proto change and
 * a removed OpenAPI field fails naming both, and passes once the CHANGELOG announces them.
 */
const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '../..');
let scratch: string;

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

async function contracts(root = repoRoot): Promise<Outcome> {
  const env = { ...process.env, BUF_BIN: infra('BUF_BIN'), OASDIFF_BIN: infra('OASDIFF_BIN') };
  try {
    const { stdout, stderr } = await run(join(repoRoot, 'node_modules/.bin/tsx'), [join(repoRoot, 'scripts/contracts.ts'), '--root', root], { env, cwd: repoRoot });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** A copy of this tree's contracts, CHANGELOG and release/previous: what the check reads. */
function copyOfTree(): string {
  const dir = mkdtempSync(join(scratch, 'tree-'));
  for (const path of ['CHANGELOG.md', 'release', 'proto', 'docs/asyncapi.yaml', ...openapiDocuments(repoRoot)]) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    cpSync(join(repoRoot, path), join(dir, path), { recursive: true });
  }
  cpSync(join(repoRoot, 'charts'), join(dir, 'charts'), { recursive: true, filter: (source) => !source.endsWith('.tgz') });
  return dir;
}

function edit(path: string, change: (text: string) => string): void {
  const before = readFileSync(path, 'utf8');
  const after = change(before);
  expect(after).not.toBe(before);
  writeFileSync(path, after);
}

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'sp-contracts-test-'));
});

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('the contract check against the previous release', () => {
  it('should pass this tree: every breaking change since the previous release is announced', async () => {
    const outcome = await contracts();
    expect({ code: outcome.code, stderr: outcome.stderr.split('\n').filter((line) => !/ExperimentalWarning|trace-warnings/.test(line) && line !== '') }).toEqual({ code: 0, stderr: [] });
    expect(outcome.stdout).toMatch(/contracts against \d+\.\d+\.\d+ \([0-9a-f]{12}\): \d+ breaking change\(s\), 0 not announced/);
  });

  it('should fail on a retyped proto field and a removed OpenAPI response field, naming each, and pass once the CHANGELOG announces them', async () => {
    const tree = copyOfTree();
    edit(join(tree, 'proto/cache/v1/cache.proto'), (text) => text.replace(/^ {2}int64 ttl_ms = 3;( {3}\/\/ Set, SetIfAbsent)/m, '  string ttl_ms = 3;$1'));
    edit(join(tree, 'services/auth/openapi.yaml'), (text) =>
      text
        .replace('required: [id, createdAt, lastSeenAt, ip, userAgent, current]', 'required: [id, createdAt, lastSeenAt, ip, current]')
        .replace(/\n {8}userAgent:\n {10}type: \[string, 'null'\]\n {10}description: User-Agent of the login, at most 256 characters\./, ''),
    );
    const failed = await contracts(tree);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/proto\/cache\/v1\/cache\.proto:\d+: Field "3" with name "ttl_ms" on message "CacheRequest" changed type from "int64" to "string"/);
    expect(failed.stderr).toContain('name `CacheRequest.ttl_ms` in an "Upgrading" entry');
    expect(failed.stderr).toMatch(/services\/auth\/openapi\.yaml: GET \/sessions: .*userAgent/);
    expect(failed.stderr).toContain('name `GET /sessions` in an "Upgrading" entry');

    // Announced: an entry of the Unreleased section's Upgrading group names each.
    edit(join(tree, 'CHANGELOG.md'), (text) =>
      text.replace(
        /(## \[Unreleased\][\s\S]*?### Upgrading\n\n)/,
        '$1- `CacheRequest.ttl_ms` is a decimal string now: upgrade every cache client before the cache.\n- `GET /sessions` no longer returns `userAgent`.\n',
      ),
    );
    const passed = await contracts(tree);
    expect({ code: passed.code, stderr: passed.stderr.split('\n').filter((line) => line.includes('→')) }).toEqual({ code: 0, stderr: [] });
    expect(passed.stdout).toContain('breaking, announced: proto/cache/v1/cache.proto');
    expect(passed.stdout).toContain('breaking, announced: services/auth/openapi.yaml: GET /sessions');
  });
});
