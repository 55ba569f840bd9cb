import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from '@jest/globals';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const checkedIn = join(packageDir, 'src/generated');
const fresh = mkdtempSync(join(tmpdir(), 'cache-proto-types-'));

afterAll(() => rmSync(fresh, { recursive: true, force: true }));

function files(dir: string): Map<string, string> {
  const entries = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
  return new Map(entries.map((e) => [relative(dir, join(e.parentPath, e.name)), readFileSync(join(e.parentPath, e.name), 'utf8')]));
}

it('should have checked in exactly what the generator makes of proto/cache/v1/cache.proto', () => {
  // The same command as `npm run generate -w @sp/cache-client`, into a scratch folder.
  execFileSync('npm', ['run', '--silent', 'generate'], { cwd: packageDir, env: { ...process.env, GENERATED_DIR: fresh }, stdio: 'pipe' });
  const expected = files(fresh);
  const actual = files(checkedIn);
  expect(expected.size).toBeGreaterThan(0);
  expect([...actual.keys()].sort()).toEqual([...expected.keys()].sort());
  for (const [name, text] of expected) expect({ name, text: actual.get(name) }).toEqual({ name, text });
});
