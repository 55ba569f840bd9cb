// test/infra/npm.sh: a fresh clone's node_modules come from the machine-wide tool cache when another
// clone installed the same inputs, and from npm itself when the inputs differ or the clone already
// has node_modules. Each test drives the real npm on throwaway clones (a folder holding copies of
// lib.sh and npm.sh and an npm project whose one dependency is a local package tarball, so nothing
// is fetched) and a cache folder of its own.
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const infra = new URL('.', import.meta.url).pathname;

let dir: string;
let shared: string;

/** The dependency's tarball at VERSION, packed by npm. */
async function packDependency(version: string): Promise<string> {
  const source = join(dir, `dep-src-${version}`);
  mkdirSync(source, { recursive: true });
  writeFileSync(join(source, 'package.json'), JSON.stringify({ name: 'dep', version }));
  writeFileSync(join(source, 'index.js'), `module.exports = '${version}';\n`);
  const { stdout } = await run('npm', ['pack', '--pack-destination', dir], { cwd: source, env: env() });
  return join(dir, stdout.trim().split('\n').at(-1)!);
}

function env(): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: dir, SUBSCRIPTION_PLATFORM_CACHE: shared, npm_config_cache: join(dir, 'npm-cache') };
}

/** The lock file npm writes for a project depending on TARBALL. */
async function lockFor(tarball: string): Promise<string> {
  const project = mkdtempSync(join(dir, 'lock-'));
  writeFileSync(join(project, 'package.json'), manifest(tarball));
  await run('npm', ['install', '--package-lock-only', '--no-audit', '--no-fund'], { cwd: project, env: env() });
  return readFileSync(join(project, 'package-lock.json'), 'utf8');
}

const manifest = (tarball: string): string => JSON.stringify({ name: 'demo', version: '1.0.0', dependencies: { dep: `file:${tarball}` } });

/** A clone whose root project depends on TARBALL, locked by LOCK. */
function clone(name: string, tarball: string, lock: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'test/infra'), { recursive: true });
  for (const script of ['lib.sh', 'npm.sh']) copyFileSync(join(infra, script), join(root, 'test/infra', script));
  writeFileSync(join(root, 'package.json'), manifest(tarball));
  writeFileSync(join(root, 'package-lock.json'), lock);
  return root;
}

async function install(root: string): Promise<string> {
  const { stderr } = await run('bash', [join(root, 'test/infra/npm.sh'), 'install', 'root'], { env: env() });
  return stderr;
}

const installed = (root: string): string => readFileSync(join(root, 'node_modules/dep/index.js'), 'utf8');
const entries = (): string[] => (existsSync(join(shared, 'npm-root')) ? readdirSync(join(shared, 'npm-root')).filter((name) => !name.startsWith('.')) : []);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'npm-tree-'));
  shared = join(dir, 'shared');
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('npm.sh install', () => {
  it('should install with npm once, and copy that tree into every later clone with the same inputs', async () => {
    const tarball = await packDependency('1.0.0');
    const lock = await lockFor(tarball);
    const first = clone('a', tarball, lock);
    expect(await install(first)).not.toContain('node_modules copied from');
    expect(installed(first)).toBe("module.exports = '1.0.0';\n");
    // npm cannot run for the second (its dependency's tarball is gone): the tree is the first's.
    rmSync(tarball);
    const second = clone('b', tarball, lock);
    expect(await install(second)).toContain('node_modules copied from');
    expect(installed(second)).toBe("module.exports = '1.0.0';\n");
    expect(readFileSync(join(second, 'node_modules/.package-lock.json'), 'utf8')).toBe(readFileSync(join(first, 'node_modules/.package-lock.json'), 'utf8'));
  });

  it('should install with npm, into a new entry, when the lock file names another version', async () => {
    const before = entries().length;
    const tarball = await packDependency('2.0.0');
    const root = clone('c', tarball, await lockFor(tarball));
    expect(await install(root)).not.toContain('node_modules copied from');
    expect(installed(root)).toBe("module.exports = '2.0.0';\n");
    expect(entries()).toHaveLength(before + 1);
  });

  it('should run npm in a clone that has node_modules already, not copy over them', async () => {
    const tarball = await packDependency('3.0.0');
    const root = clone('d', tarball, await lockFor(tarball));
    await install(root);
    rmSync(join(root, 'node_modules/dep'), { recursive: true });
    // Copying would not bring the package back into a tree that has node_modules: npm does.
    expect(await install(root)).not.toContain('node_modules copied from');
    expect(installed(root)).toBe("module.exports = '3.0.0';\n");
  });
});
