import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = fileURLToPath(new URL('../..', import.meta.url));
// The "16 KB" and "8 KB", read as the stricter decimal kilobyte.
const KB = 1000;

/** README files over their size, as `path: bytes > limit`: a reader's page, not a lab notebook (issue 42). */
function oversized(paths: readonly string[], limit: number): string[] {
  return paths.map((path) => [path, statSync(join(root, path)).size] as const).filter(([, size]) => size >= limit).map(([path, size]) => `${path}: ${size} > ${limit}`);
}

const serviceReadmes = readdirSync(join(root, 'services')).map((name) => `services/${name}/README.md`);

/** Every README.md of the project's own folders (not installed packages, caches or the previous release's copy). */
function allReadmes(folder = ''): string[] {
  return readdirSync(join(root, folder), { withFileTypes: true }).flatMap((entry) => {
    const path = folder === '' ? entry.name : `${folder}/${entry.name}`;
    if (entry.isDirectory()) return ['node_modules', '.git', '.cache', 'dist', 'release'].includes(entry.name) ? [] : allReadmes(path);
    return entry.name === 'README.md' ? [path] : [];
  });
}

// A run's date or a load average beside a figure is a run log: it belongs to bench/results/ and the changelog.
const RUN_LOG = /\b20\d\d-[01]\d-[0-3]\d\b|\bload (average )?\d/;

describe('README files', () => {
  it('should keep the top-level README under 8 KB and each service README under 16 KB', () => {
    expect(serviceReadmes.length).toBe(5);
    expect([...oversized(['README.md'], 8 * KB), ...oversized(serviceReadmes, 16 * KB)]).toEqual([]);
  });

  it('should carry no run log: no date of a run and no load average in any README', () => {
    const readmes = allReadmes();
    expect(readmes.length).toBeGreaterThan(20);
    const logged = readmes.flatMap((path) =>
      readFileSync(join(root, path), 'utf8')
        .split('\n')
        .flatMap((line, index) => (RUN_LOG.test(line) ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
    );
    expect(logged).toEqual([]);
  });
});
