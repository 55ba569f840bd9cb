// The settings `make up` gives a service, as `bash scripts/platform.sh env NAME` prints them: one
// reader for the tests and benchmarks that run a service as `make up` runs it.
import { execFileSync } from 'node:child_process';
import { delimiter, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The allocator's settings among them (the image's jemalloc: the Dockerfile says why). */
export const ALLOCATOR_SETTINGS = ['LD_PRELOAD', 'MALLOC_CONF'];

/** The VAR=value settings `make up` gives service NAME (the gateway's too), by name. */
export function makeUpSettings(name: string): Record<string, string> {
  // platform.sh runs scripts/local-platform.ts with the `node` on PATH: this Node (24), not the machine's.
  const PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter);
  const printed = execFileSync('bash', ['scripts/platform.sh', 'env', name], { cwd: root, env: { ...process.env, PATH }, encoding: 'utf8' });
  return Object.fromEntries(
    printed
      .split('\n')
      .filter((line) => line.includes('='))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
}
