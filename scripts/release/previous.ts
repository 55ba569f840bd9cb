/**
 * The previous release (release/previous: `version=` and `commit=` lines) and its contract files,
 * read from the same clone's history with git: no tag, worktree or registry needed.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface PreviousRelease {
  version: string;
  commit: string;
}

export function previousRelease(root: string): PreviousRelease {
  const text = readFileSync(join(root, 'release/previous'), 'utf8');
  const field = (name: string): string => {
    const value = new RegExp(`^${name}=(\\S+)$`, 'm').exec(text)?.[1];
    if (value === undefined) throw new Error(`release/previous: no ${name}= line`);
    return value;
  };
  const commit = field('commit');
  if (!/^[0-9a-f]{40}$/.test(commit)) throw new Error(`release/previous: commit=${commit} is not a full commit id`);
  return { version: field('version'), commit };
}

/** The files of the contracts: the proto, the OpenAPI and AsyncAPI documents, the charts' values schemas. */
export const isContractFile = (path: string): boolean =>
  /^proto\/.+\.proto$/.test(path) || /^services\/[^/]+\/openapi\.yaml$/.test(path) || path === 'docs/asyncapi.yaml' || /^charts\/.+\/values\.schema\.json$/.test(path);

/** Writes the contract files of `commit` (of the repository at `repo`) under `dir`. */
export function extractContracts(repo: string, commit: string, dir: string): void {
  let files: string[];
  try {
    files = execFileSync('git', ['-C', repo, 'ls-tree', '-r', '--name-only', commit], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: ['ignore', 'pipe', 'pipe'] }).split('\n');
  } catch {
    throw new Error(`the previous release's commit ${commit} is not in this clone (a shallow clone? git fetch --unshallow)`);
  }
  for (const file of files.filter(isContractFile)) {
    mkdirSync(dirname(join(dir, file)), { recursive: true });
    writeFileSync(join(dir, file), execFileSync('git', ['-C', repo, 'show', `${commit}:${file}`], { maxBuffer: 64 * 1024 * 1024 }));
  }
}
