import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';

const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'summary-reporter-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** Runs jest in-band on one CommonJS test file with the repository's summary reporter. */
async function runJest(name: string, source: string, graceMs: number, env: Record<string, string> = {}): Promise<Run> {
  writeFileSync(join(dir, name), source);
  const config = { rootDir: dir, testMatch: [`**/${name}`], transform: {}, reporters: [join(root, 'test/jest/summary-reporter.cjs')] };
  const started = Date.now();
  const child = spawn(process.execPath, [join(root, 'node_modules/jest/bin/jest.js'), '--runInBand', '--config', JSON.stringify(config)], {
    cwd: dir,
    env: { ...process.env, SP_TEST_EXIT_GRACE_MS: String(graceMs), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  return { code, stdout, stderr, ms: Date.now() - started };
}

describe('the summary reporter', () => {
  it('should print the summary, then fail a run that a leftover server keeps alive instead of letting it hang', async () => {
    const leak = "const { createServer } = require('node:net');\ntest('leaves a server listening', () => { createServer().listen(0, '127.0.0.1'); });\n";
    const run = await runJest('leak.test.js', leak, 2000);
    expect(run.stdout).toContain('1 passed, 0 failed');
    expect(run.stderr).toContain('jest had not exited 2 s after the run');
    expect(run.code).toBe(1);
  }, 60_000);

  it('should let a clean run exit at once with its own status, without waiting for the grace period', async () => {
    const run = await runJest('clean.test.js', "test('passes', () => { expect(1).toBe(1); });\n", 45_000);
    expect(run.stdout).toContain('1 passed, 0 failed');
    expect(run.code).toBe(0);
    expect(run.ms).toBeLessThan(45_000);
  }, 60_000);

  it("should name its lane and write its counts for make test's total when run as one of its jest processes", async () => {
    const counts = join(dir, 'counts.json');
    const source = "test('passes', () => { expect(1).toBe(1); });\ntest('fails', () => { expect(1).toBe(2); });\n";
    const run = await runJest('lane.test.js', source, 45_000, { SP_TEST_COUNTS: counts, SP_TEST_LANE: 'the cluster tiers' });
    expect(run.stdout).toContain('the cluster tiers: 1 passed, 1 failed');
    expect(JSON.parse(readFileSync(counts, 'utf8'))).toEqual({ passed: 1, failed: 1, skipped: 0 });
    expect(run.code).toBe(1);
  }, 60_000);
});
