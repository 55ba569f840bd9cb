import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { z } from 'zod';
import { valuesTables } from '../../scripts/docs/chart-values.js';
import { settingsTable } from '../../scripts/docs/settings.js';
import { generate, outOfDate } from '../../scripts/docs/targets.js';

const root = fileURLToPath(new URL('../..', import.meta.url)).replace(/\/$/, '');
const scratch = mkdtempSync(join(tmpdir(), 'generated-docs-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const SECTION = (name: string): string => `<!-- BEGIN docs:${name} -->\n<!-- END docs:${name} -->\n`;

/**
 * A repository of one service whose config.ts declares `settings` (plain objects with the two
 * members the generator reads, so the file needs no imports) and whose README says `readme`.
 */
function fixture(settings: Record<string, string | undefined>, readme: string): string {
  const dir = mkdtempSync(join(scratch, 'repo-'));
  mkdirSync(join(dir, 'services/demo/src'), { recursive: true });
  const entries = Object.entries(settings).map(([name, description]) => `  ${name}: { description: ${JSON.stringify(description)}, safeParse: () => ({ success: true, data: 1 }) },`);
  writeFileSync(join(dir, 'services/demo/src/config.ts'), `export const settings = {\n${entries.join('\n')}\n};\n`);
  writeFileSync(join(dir, 'services/demo/README.md'), readme);
  writeFileSync(join(dir, 'README.md'), `# Root\n\n${SECTION('settings:common')}`);
  return dir;
}

/** The fixture's problems after its sections were generated once from `before` and config.ts then became `after`. */
async function problemsAfterChange(before: Record<string, string | undefined>, after: Record<string, string | undefined>, prose = ''): Promise<string[]> {
  const first = fixture(before, `# Demo\n\n${prose}\n\n## Configuration\n\n${SECTION('settings')}`);
  const generated = await generate(first);
  const second = fixture(after, generated.files.get('services/demo/README.md')!.after);
  writeFileSync(join(second, 'README.md'), generated.files.get('README.md')!.after);
  const { files, problems } = await generate(second);
  return [...problems, ...outOfDate(files).map((file) => `${file}: out of date`)];
}

describe('generated documentation (make docs, checked by make lint)', () => {
  it('should find every settings table and chart values table of the repository up to date, every setting described', async () => {
    const { files, problems } = await generate(root);
    expect(problems).toEqual([]);
    expect(outOfDate(files)).toEqual([]);
    expect([...files.keys()]).toEqual(expect.arrayContaining(['README.md', 'services/cache/README.md', 'services/auth/README.md', 'charts/subscription-platform/charts/cache/README.md']));
  });

  it('should pass a README generated from its config.ts', async () => {
    expect(await problemsAfterChange({ Demo__Port: 'HTTP port' }, { Demo__Port: 'HTTP port' })).toEqual([]);
  });

  it('should fail when a setting is added to config.ts without a description, or without regenerating the README', async () => {
    expect(await problemsAfterChange({ Demo__Port: 'HTTP port' }, { Demo__Port: 'HTTP port', Demo__New: undefined })).toEqual([
      "services/demo/src/config.ts: Demo__New: no description (add .describe('…') to its declaration)",
      'services/demo/README.md: out of date',
    ]);
    expect(await problemsAfterChange({ Demo__Port: 'HTTP port' }, { Demo__Port: 'HTTP port', Demo__New: 'A new one' })).toEqual(['services/demo/README.md: out of date']);
  });

  it('should fail when a documented setting is gone from config.ts, in its table and in prose', async () => {
    expect(await problemsAfterChange({ Demo__Port: 'HTTP port', Demo__Old: 'Gone soon' }, { Demo__Port: 'HTTP port' }, 'Set `Demo__Old` to tune it.')).toEqual([
      'services/demo/README.md: mentions Demo__Old, which no services/*/src/config.ts declares',
      'services/demo/README.md: out of date',
    ]);
  });

  it('should fail when a README has no generated section, or two', async () => {
    const dir = fixture({ Demo__Port: 'HTTP port' }, '# Demo\n');
    expect((await generate(dir)).problems).toEqual(['services/demo/README.md: needs exactly one "<!-- BEGIN docs:settings -->" and one "<!-- END docs:settings -->" (found 0 and 0)']);
  });

  it('should show defaults as an operator writes them: required, unset, lists comma-separated', () => {
    const { markdown, problems } = settingsTable({
      A__Required: z.string().describe('a'),
      A__Optional: z.string().optional().describe('b'),
      A__Number: z.coerce.number().default(5).describe('c'),
      A__List: z.string().transform((v) => new Set(v.split(','))).default(new Set(['x', 'y'])).describe('d | e'),
      A__Empty: z.string().transform((v) => v.split(',')).default([]).describe('f'),
    });
    expect(problems).toEqual([]);
    expect(markdown.split('\n').slice(2)).toEqual([
      '| `A__Required` | required | a |',
      '| `A__Optional` | – | b |',
      '| `A__Number` | `5` | c |',
      '| `A__List` | `x,y` | d \\| e |',
      '| `A__Empty` | – | f |',
    ]);
  });
});

describe('chart values tables', () => {
  const values = ['## @section Main', '## @param replicaCount Pods', 'replicaCount: 1', '## @param rollout Bounds of a rollout', 'rollout:', '  maxSurge: 25%', 'labels:', '  team: a', ''].join('\n');

  it('should fail for a value without @param and for a @param naming no value', () => {
    expect(valuesTables(values).problems).toEqual(['labels.team: no @param']);
    expect(valuesTables(values.replace('## @param replicaCount Pods', '## @param replicas Pods')).problems).toEqual(['@param replicas: no such value', 'replicaCount: no @param', 'labels.team: no @param']);
  });

  it('should list each @param with its description and default, a map documented as a whole on one line', () => {
    const { markdown, problems } = valuesTables(`${values.replace('labels:', '## @param labels Labels of <every> object\nlabels:')}`);
    expect(problems).toEqual([]);
    expect(markdown).toContain('| `rollout` | Bounds of a rollout | `{"maxSurge":"25%"}` |');
    expect(markdown).toContain('| `labels` | Labels of &lt;every&gt; object | `{"team":"a"}` |');
  });

  it('should document every value of the charts (the repository check above runs it on each values.yaml)', () => {
    const text = readFileSync(join(root, 'charts/subscription-platform/charts/cache/values.yaml'), 'utf8');
    expect(valuesTables(text).problems).toEqual([]);
    expect(valuesTables(`${text}\nsurprise: true\n`).problems).toEqual(['surprise: no @param']);
  });
});
