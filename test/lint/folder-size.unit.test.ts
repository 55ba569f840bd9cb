import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** More files than this side by side and the folder no longer shows what the code is made of: group by feature. */
const MAX_TS_FILES = 25;

/** Every folder under `dir` (itself included) with the number of `.ts` files directly in it; generated code left out. */
function tsCounts(dir: string): Array<[string, number]> {
  const entries = readdirSync(dir, { withFileTypes: true });
  const own = entries.filter((entry) => entry.isFile() && entry.name.endsWith('.ts')).length;
  const below = entries.filter((entry) => entry.isDirectory() && entry.name !== 'generated' && entry.name !== 'node_modules').flatMap((entry) => tsCounts(join(dir, entry.name)));
  return [[relative(root, dir), own], ...below];
}

const sourceRoots = ['packages', 'services'].flatMap((parent) => readdirSync(join(root, parent)).map((name) => join(root, parent, name, 'src')));

describe('source folder sizes', () => {
  it(`should keep every source folder of the packages and services at ${MAX_TS_FILES} .ts files or fewer`, () => {
    expect(sourceRoots.length).toBeGreaterThanOrEqual(10);
    const oversized = sourceRoots.flatMap(tsCounts).filter(([, count]) => count > MAX_TS_FILES).map(([folder, count]) => `${folder}: ${count}`);
    expect(oversized).toEqual([]);
  });
});
