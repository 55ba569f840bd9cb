import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { repoRoot, services } from './support/service-config.js';

// An empty HOME: no ~/.kube/config for the controller to fall back on.
const home = mkdtempSync(join(tmpdir(), 'start-up-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe.each(services)('%s started with a bad configuration', (service) => {
  it('should exit 1 naming every problem on its own line, without a stack trace', () => {
    // Every service has a required variable or a numeric port: either way the start is refused.
    const run = spawnSync(process.execPath, [join(repoRoot, `services/${service}/dist/main.js`)], {
      env: { PATH: process.env.PATH, HOME: home, Cache__Port: 'not-a-port' },
      encoding: 'utf8',
      timeout: 10_000,
    });
    expect(run.status).toBe(1);
    const lines = run.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line).toMatch(new RegExp(`^${service}: invalid configuration: \\S+: .+`));
    expect(run.stdout).toBe('');
  });
});
