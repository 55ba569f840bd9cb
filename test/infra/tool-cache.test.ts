// The machine-wide tool cache of test/infra/lib.sh (`cached`): keyed by tool, version and build
// inputs, verified by checksums, written atomically, safe for two clones installing at once; and
// run_step, which keeps a step's output in a log file and prints its end only when it fails.
// Each test drives lib.sh from throwaway clones (a folder holding a copy of it) and a cache folder
// of its own, with a build function that counts its runs.
import { execFile, spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';

const run = promisify(execFile);
const lib = new URL('./lib.sh', import.meta.url).pathname;

// The tool: one file with the input, one with some bytes, built in BUILD_SECONDS.
const driver = `source "$(dirname "$0")/lib.sh"
build() {
  echo "$$ $TOOL_INPUT" >> "$BUILDS"
  sleep "\${BUILD_SECONDS:-0}"
  printf '%s\\n' "$TOOL_INPUT" > "$1/tool"
  mkdir -p "$1/sub"
  head -c 65536 /dev/urandom > "$1/sub/blob"
}
cached demo "$TOOL_VERSION" "$(input_key "$TOOL_INPUT" "$(declare -f build)")" "a demo tool" build
echo "$ENTRY"
`;

let dir: string;
let shared: string;

function clone(name: string): string {
  const root = join(dir, name);
  mkdirSync(join(root, 'test/infra'), { recursive: true });
  copyFileSync(lib, join(root, 'test/infra/lib.sh'));
  writeFileSync(join(root, 'test/infra/install-demo.sh'), driver);
  return root;
}

interface Install {
  version?: string;
  input?: string;
  seconds?: number;
}

function env(options: Install): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    HOME: dir,
    SUBSCRIPTION_PLATFORM_CACHE: shared,
    BUILDS: join(dir, 'builds'),
    TOOL_VERSION: options.version ?? 'v1',
    TOOL_INPUT: options.input ?? 'input-1',
    BUILD_SECONDS: String(options.seconds ?? 0),
  };
}

/** Runs the install in a clone; resolves to the entry it printed. */
async function install(root: string, options: Install = {}): Promise<string> {
  const { stdout } = await run('bash', [join(root, 'test/infra/install-demo.sh')], { env: env(options) });
  return stdout.trim();
}

const builds = (): string[] => (existsSync(join(dir, 'builds')) ? readFileSync(join(dir, 'builds'), 'utf8').trim().split('\n') : []);

/** Every file of the entry against its manifest, as `sha256sum -c` would. */
async function sound(entry: string): Promise<boolean> {
  try {
    await run('sha256sum', ['--quiet', '-c', '.manifest'], { cwd: entry });
    return true;
  } catch {
    return false;
  }
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tool-cache-'));
  shared = join(dir, 'shared');
});

afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the machine-wide tool cache', () => {
  it('should build a tool once for every clone on the machine, outside the clones', async () => {
    const first = await install(clone('a'));
    expect(await install(clone('a'))).toBe(first);
    expect(await install(clone('b'))).toBe(first);
    expect(builds()).toHaveLength(1);
    expect(first.startsWith(`${shared}/demo/v1-`)).toBe(true);
    expect(readFileSync(join(first, 'tool'), 'utf8')).toBe('input-1\n');
    expect(await sound(first)).toBe(true);
  });

  it('should build again, into another entry, when the version or a build input changes', async () => {
    const a = clone('a');
    const first = await install(a);
    const newVersion = await install(a, { version: 'v2' });
    const newInput = await install(a, { input: 'input-2' });
    expect(new Set([first, newVersion, newInput]).size).toBe(3);
    expect(builds()).toHaveLength(3);
    expect(newVersion.startsWith(`${shared}/demo/v2-`)).toBe(true);
    // A clone still on the old inputs keeps finding its entry.
    expect(await install(clone('b'))).toBe(first);
    expect(builds()).toHaveLength(3);
  });

  it('should detect a damaged entry in a clone that has not used it yet, and build it again', async () => {
    const entry = await install(clone('a'));
    // Same size, other bytes: only the checksums show it.
    const blob = join(entry, 'sub/blob');
    const bytes = readFileSync(blob);
    bytes[100] = bytes[100]! ^ 0xff;
    writeFileSync(blob, bytes);
    expect(await sound(entry)).toBe(false);
    expect(await install(clone('b'))).toBe(entry);
    expect(builds()).toHaveLength(2);
    expect(await sound(entry)).toBe(true);
  });

  it('should detect a truncated or missing file in a clone that verified the entry before', async () => {
    const a = clone('a');
    const entry = await install(a);
    truncateSync(join(entry, 'sub/blob'), 10);
    await install(a);
    expect(builds()).toHaveLength(2);
    rmSync(join(entry, 'tool'));
    await install(a);
    expect(builds()).toHaveLength(3);
    expect(await sound(entry)).toBe(true);
  });

  it('should rebuild a half-written entry, and never take a build cut off in its folder', async () => {
    const entry = await install(clone('a'));
    // What a copy that stopped half-way leaves: files, no manifest.
    rmSync(join(entry, '.manifest'));
    appendFileSync(join(entry, 'tool'), 'partial');
    expect(await install(clone('b'))).toBe(entry);
    expect(builds()).toHaveLength(2);
    expect(readFileSync(join(entry, 'tool'), 'utf8')).toBe('input-1\n');

    // A build killed mid-way (its process group, as Ctrl-C or a CI timeout would) leaves its
    // temporary folder, never the entry.
    const killed = spawn('bash', [join(clone('c'), 'test/infra/install-demo.sh')], { env: env({ version: 'v3', seconds: 30 }), detached: true, stdio: 'ignore' });
    const exited = new Promise((resolve) => killed.once('exit', resolve));
    await waitFor(() => builds().length === 3);
    process.kill(-killed.pid!, 'SIGKILL');
    await exited;
    const v3 = readdirSync(join(shared, 'demo')).filter((name) => name.includes('v3'));
    expect(v3.every((name) => name.startsWith('.'))).toBe(true);
    const built = await install(clone('d'), { version: 'v3' });
    expect(builds()).toHaveLength(4);
    expect(await sound(built)).toBe(true);
    expect(readdirSync(join(shared, 'demo')).filter((name) => name.startsWith('.tmp-'))).toEqual([]);
  });

  it('should build once when two clones install at the same moment', async () => {
    const [a, b] = await Promise.all([install(clone('a'), { seconds: 2 }), install(clone('b'), { seconds: 2 })]);
    expect(a).toBe(b);
    expect(builds()).toHaveLength(1);
    expect(await sound(a)).toBe(true);
  });
});

describe('the service images\' keys (images.sh key)', () => {
  // A tree shaped like this repository's build context, with two services and a shared package.
  const files: Record<string, string> = {
    Dockerfile: 'ARG NODE_IMAGE=node:24-bookworm-slim\n',
    'package.json': '{}\n',
    'package-lock.json': '{}\n',
    'packages/shared/src/index.ts': 'export const shared = 1;\n',
    'services/cache/src/main.ts': 'export const cache = 1;\n',
    'services/cache/test/main.test.ts': 'it.todo("x");\n',
    'services/auth/src/main.ts': 'export const auth = 1;\n',
  };

  const keys = async (root: string): Promise<Record<string, string>> => {
    const key = (service: string) => run('bash', [join(root, 'test/infra/images.sh'), 'key', service], { env: env({}) }).then(({ stdout }) => stdout.trim());
    return { cache: await key('cache'), auth: await key('auth') };
  };

  it('should change for a change to its own service or to what the services share, and for nothing else', async () => {
    const root = clone('repo');
    for (const script of ['images.sh', 'toolchain.sh']) copyFileSync(new URL(`./${script}`, import.meta.url).pathname, join(root, 'test/infra', script));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, '..'), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    await run('git', ['init', '-q'], { cwd: root });
    const before = await keys(root);
    expect(before.cache).toMatch(/^[0-9a-f]{16}$/);
    expect(before.auth).not.toBe(before.cache);

    appendFileSync(join(root, 'services/cache/test/main.test.ts'), '// a test only\n');
    expect(await keys(root)).toEqual(before);
    appendFileSync(join(root, 'services/cache/src/main.ts'), '// changed\n');
    const cacheChanged = await keys(root);
    expect(cacheChanged.cache).not.toBe(before.cache);
    expect(cacheChanged.auth).toBe(before.auth);
    appendFileSync(join(root, 'packages/shared/src/index.ts'), '// changed\n');
    const sharedChanged = await keys(root);
    expect(sharedChanged.cache).not.toBe(cacheChanged.cache);
    expect(sharedChanged.auth).not.toBe(before.auth);
  });
});

describe('run_step', () => {
  const step = (command: string) => {
    const root = clone('a');
    writeFileSync(join(root, 'test/infra/step.sh'), `source "$(dirname "$0")/lib.sh"\nstep() { ${command}; }\nrun_step demo step\n`);
    return run('bash', [join(root, 'test/infra/step.sh')], { env: env({}) }).then(
      ({ stderr }) => ({ code: 0, stderr, log: readFileSync(join(root, '.cache/logs/demo.log'), 'utf8') }),
      (error: { code: number; stderr: string }) => ({ code: error.code, stderr: error.stderr, log: readFileSync(join(root, '.cache/logs/demo.log'), 'utf8') }),
    );
  };

  it('should keep the output of a step that succeeds in its log, and print one line', async () => {
    const result = await step('for i in $(seq 1 50); do echo "tool line $i"; done; log "a log line"; say "building it"');
    expect(result.code).toBe(0);
    expect(result.stderr.trim().split('\n')).toEqual(['[infra] building it', expect.stringMatching(/^\[infra\] ✓ demo \d+\.\ds$/)]);
    expect(result.log).toContain('tool line 50');
    expect(result.log).toContain('a log line');
  });

  it('should print the end of the log and its path when a step fails', async () => {
    const result = await step('for i in $(seq 1 50); do echo "tool line $i"; done; false; echo "not reached"');
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/✗ demo failed after \d+\.\ds \(exit 1\); the end of .*\/\.cache\/logs\/demo\.log:/);
    expect(result.stderr).toContain('    tool line 50');
    expect(result.stderr).not.toContain('tool line 20\n');
    expect(result.log).not.toContain('not reached');
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  if (!condition()) throw new Error('condition not met within 10 s');
}
