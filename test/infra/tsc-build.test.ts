// test/infra/tsc.sh: a fresh clone's compiled output comes from the machine-wide tool cache when
// another clone compiled the same inputs, and from tsc when any input differs or the clone has
// compiled before. Each test runs the real tsc (the repository's, through a node_modules link) on
// throwaway clones holding copies of lib.sh and tsc.sh and a one-project workspace, with a cache
// folder of their own.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const infra = new URL('.', import.meta.url).pathname;
const repoRoot = join(infra, '../..');

let dir: string;
let shared: string;

/** A clone whose one project's source is SOURCE. */
function clone(name: string, source: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'test/infra'), { recursive: true });
  for (const script of ['lib.sh', 'tsc.sh']) copyFileSync(join(infra, script), join(root, 'test/infra', script));
  symlinkSync(join(repoRoot, 'node_modules'), join(root, 'node_modules'));
  writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'demo', version: '1.0.0', private: true }));
  writeFileSync(join(root, 'package-lock.json'), JSON.stringify({ name: 'demo', lockfileVersion: 3, packages: {} }));
  writeFileSync(join(root, 'tsconfig.json'), JSON.stringify({ files: [], references: [{ path: 'packages/a' }] }));
  mkdirSync(join(root, 'packages/a/src'), { recursive: true });
  writeFileSync(join(root, 'packages/a/package.json'), JSON.stringify({ name: 'a', version: '1.0.0', type: 'module' }));
  writeFileSync(join(root, 'packages/a/tsconfig.json'), JSON.stringify({ compilerOptions: { composite: true, rootDir: 'src', outDir: 'dist', module: 'nodenext', target: 'es2022', types: [] }, include: ['src'] }));
  writeFileSync(join(root, 'packages/a/src/index.ts'), source);
  return root;
}

async function build(root: string): Promise<string> {
  const { stderr } = await run('bash', [join(root, 'test/infra/tsc.sh'), 'build'], { env: { PATH: process.env.PATH, HOME: dir, SUBSCRIPTION_PLATFORM_CACHE: shared } });
  return stderr;
}

const compiled = (root: string): string => readFileSync(join(root, 'packages/a/dist/index.js'), 'utf8');

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsc-build-'));
  shared = join(dir, 'shared');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('tsc.sh build', () => {
  it('should compile once, and copy that output into every later clone with the same sources', async () => {
    const first = clone('a', 'export const answer: number = 1;\n');
    expect(await build(first)).not.toContain('copied from');
    expect(compiled(first)).toContain('answer = 1');
    const second = clone('b', 'export const answer: number = 1;\n');
    expect(await build(second)).toContain('compiled output copied from');
    expect(compiled(second)).toBe(compiled(first));
    expect(readFileSync(join(second, 'packages/a/dist/index.d.ts'), 'utf8')).toBe(readFileSync(join(first, 'packages/a/dist/index.d.ts'), 'utf8'));
  });

  it('should compile a clone whose sources differ, never copying another source\'s output', async () => {
    const root = clone('c', 'export const answer: number = 2;\n');
    expect(await build(root)).not.toContain('copied from');
    expect(compiled(root)).toContain('answer = 2');
  });

  it('should compile a later edit of a clone that got copied output, incrementally, with no copy over it', async () => {
    const root = clone('d', 'export const answer: number = 1;\n');
    expect(await build(root)).toContain('compiled output copied from');
    writeFileSync(join(root, 'packages/a/src/index.ts'), 'export const answer: number = 3;\n');
    expect(await build(root)).not.toContain('copied from');
    expect(compiled(root)).toContain('answer = 3');
  });
});
