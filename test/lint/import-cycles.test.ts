import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import type { Linter } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
const project = new ESLint({ cwd: root });
const dir = mkdtempSync(join(tmpdir(), 'import-cycles-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The repository's config for a file, as eslint applies it. */
async function configOf(file: string): Promise<Linter.Config> {
  return (await project.calculateConfigForFile(file)) as Linter.Config;
}

/**
 * Lints these files (name → source, written to a folder of their own) with the repository's
 * import-cycle rule, its plugin and its resolver settings alone: no type information, so it runs
 * in about a second. Answers each file's problems.
 */
async function problems(files: Record<string, string>): Promise<Record<string, string[]>> {
  const config = await configOf('services/webhooks/src/payments/payment-event-actions.ts');
  const folder = mkdtempSync(join(dir, 'case-'));
  for (const [name, source] of Object.entries(files)) writeFileSync(join(folder, name), source);
  const eslint = new ESLint({
    cwd: folder,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { 'import-x': config.plugins!['import-x']! },
        settings: config.settings,
        rules: { 'import-x/no-cycle': config.rules!['import-x/no-cycle']! },
      },
    ],
  });
  const results = await eslint.lintFiles(Object.keys(files));
  return Object.fromEntries(results.map((result) => [result.filePath.slice(folder.length + 1), result.messages.map((message) => `${message.ruleId ?? 'parse'}: ${message.message}`)]));
}

describe('lint rule against import cycles', () => {
  it('should reject two modules that import each other, as the NodeNext `.js` names of their sources', async () => {
    const found = await problems({
      'dispatch.ts': "import { action } from './action.js';\nexport const table = new Map([['a', action]]);\n",
      'action.ts': "import { table } from './dispatch.js';\nexport const action = (): number => table.size;\n",
    });
    expect(found['dispatch.ts']).toEqual(['import-x/no-cycle: Dependency cycle detected']);
    expect(found['action.ts']).toEqual(['import-x/no-cycle: Dependency cycle detected']);
  });

  it('should reject a cycle through a third module', async () => {
    const found = await problems({
      'a.ts': "import { b } from './b.js';\nexport const a = (): number => b() + 1;\n",
      'b.ts': "import { c } from './c.js';\nexport const b = (): number => c() + 1;\n",
      'c.ts': "import { a } from './a.js';\nexport const c = (): number => 1;\nexport const again = (): number => a();\n",
    });
    for (const file of ['a.ts', 'b.ts', 'c.ts']) expect(found[file]!.length).toBeGreaterThan(0);
  });

  it('should accept the same modules once the shared part stands on its own', async () => {
    const found = await problems({
      'dispatch.ts': "import { action } from './action.js';\nexport const table = new Map([['a', action]]);\n",
      'action.ts': "import { limit } from './action-types.js';\nexport const action = (): number => limit;\n",
      'action-types.ts': 'export const limit = 3;\n',
    });
    expect(found).toEqual({ 'dispatch.ts': [], 'action.ts': [], 'action-types.ts': [] });
  });

  it('should apply the rule to every service and package source file, and not to tests', async () => {
    const rule = (await configOf('services/webhooks/src/payments/payment-event-actions.ts')).rules?.['import-x/no-cycle'];
    expect(Array.isArray(rule) && rule[0]).toBe(2);
    for (const file of ['packages/http/src/koa.ts', 'packages/cache-client/src/index.ts', 'services/auth/src/sessions/session-keeper.ts', 'services/cache/src/cache.ts', 'services/graph-controller/src/reconcile/reconciler.ts', 'services/graph-registry/src/main.ts']) {
      expect((await configOf(file)).rules?.['import-x/no-cycle']).toEqual(rule);
    }
    expect((await configOf('services/webhooks/test/sms.test.ts')).rules?.['import-x/no-cycle']).toBeUndefined();
  });
});
