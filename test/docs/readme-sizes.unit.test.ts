import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';

const root = fileURLToPath(new URL('../..', import.meta.url));
const KiB = 1024;

/** README files over their size, as `path: bytes > limit`: a reader's page, not a lab notebook (issue 42). */
function oversized(paths: readonly string[], limit: number): string[] {
  return paths.map((path) => [path, statSync(join(root, path)).size] as const).filter(([, size]) => size >= limit).map(([path, size]) => `${path}: ${size} > ${limit}`);
}

const serviceReadmes = readdirSync(join(root, 'services')).map((name) => `services/${name}/README.md`);

describe('README sizes', () => {
  it('should keep the top-level README under 8 KiB and each service README under 16 KiB', () => {
    expect(serviceReadmes.length).toBe(5);
    expect([...oversized(['README.md'], 8 * KiB), ...oversized(serviceReadmes, 16 * KiB)]).toEqual([]);
  });
});
