import { execFile } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot, type Service } from './service-config.js';

const run = promisify(execFile);

async function withLock<T>(name: string, work: () => Promise<T>): Promise<T> {
  const lock = join(tmpdir(), `sp-${name}.lock`);
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      if (Date.now() > deadline) throw new Error(`${lock} stays locked: remove it if no test runs`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await work();
  } finally {
    rmdirSync(lock);
  }
}

/** `tsc --build [PROJECT]` at the repository root, incremental; one at a time per machine. */
async function tscBuild(project?: string): Promise<void> {
  await withLock('tsc-build', async () => {
    try {
      await run(join(repoRoot, 'node_modules/.bin/tsc'), ['--build', ...(project ? [project] : [])], { cwd: repoRoot, maxBuffer: 16 * 1024 * 1024 });
    } catch (err) {
      const failure = err as { stdout?: string; stderr?: string };
      throw new Error(`tsc --build ${project ?? ''} failed:\n${failure.stdout ?? ''}${failure.stderr ?? ''}`);
    }
  });
}

/**
 * `tsc --build services/<name>`: what `make build` runs for one service, so the service's dist is
 * current. Incremental: a no-op when nothing changed. One at a time per machine.
 */
export async function buildService(service: Service): Promise<void> {
  await tscBuild(`services/${service}`);
}

/** `tsc --build`: every package and service (`make build`, the images' compile step). */
export async function buildAll(): Promise<void> {
  await tscBuild();
}
