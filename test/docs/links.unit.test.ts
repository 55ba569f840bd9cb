import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { brokenLinks } from '../../scripts/docs/links.js';
import { anchorsOf } from '../../scripts/docs/markdown.js';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const scratch = mkdtempSync(join(tmpdir(), 'doc-links-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('links in the documentation', () => {
  it('should resolve every relative link of every Markdown file to a file, and its anchor to a heading', () => {
    expect(brokenLinks(root)).toEqual([]);
  });

  it('should report a missing file, a missing heading, and leave code and other sites alone', () => {
    mkdirSync(join(scratch, 'docs'));
    writeFileSync(join(scratch, 'README.md'), '# Top\n\n## The `GET /auth` route (v2)\n\n[ok](docs/a.md#a-b) [self](#the-get-auth-route-v2) [gone](docs/b.md) [bad](docs/a.md#nope) [web](https://example.com/x.md)\n\n```md\n[in code](nowhere.md)\n```\n');
    writeFileSync(join(scratch, 'docs/a.md'), '# A b\n\n[up](../README.md#top)\n');
    expect(brokenLinks(scratch)).toEqual(['README.md: link to docs/b.md: no such file', 'README.md: link to docs/a.md#nope: no heading #nope in docs/a.md']);
  });

  it('should anchor headings as GitHub does, repeated ones numbered', () => {
    expect([...anchorsOf('# Metrics & alerts\n## Runs 7-8: a quiet machine\n## Sessions\n## Sessions\n```\n# not a heading\n```\n')]).toEqual(['metrics--alerts', 'runs-7-8-a-quiet-machine', 'sessions', 'sessions-1']);
  });
});
