import { fileURLToPath } from 'node:url';
import { describe, expect, it } from '@jest/globals';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import type { Linter } from 'eslint';

const root = fileURLToPath(new URL('../..', import.meta.url));
const project = new ESLint({ cwd: root });

/** The repository's rule as its eslint config applies it to a file. */
async function restrictedSyntaxOf(file: string): Promise<Linter.RuleEntry | undefined> {
  const config = (await project.calculateConfigForFile(file)) as Linter.Config;
  return config.rules?.['no-restricted-syntax'];
}

/** The repository's rule alone, without type information, so each snippet lints in milliseconds. */
async function problems(code: string): Promise<string[]> {
  const rule = await restrictedSyntaxOf('services/graph-controller/src/informer/watchdog-watch.ts');
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser }, rules: { 'no-restricted-syntax': rule } }],
  });
  const [result] = await eslint.lintText(code, { filePath: 'services/example/src/example.ts' });
  return result!.messages.map((message) => `${message.ruleId ?? 'parse'}: ${message.message}`);
}

describe('lint rule against private members of dependencies', () => {
  it.each([
    ['Reflect.set on a library object (the watchdog watch)', "Reflect.set(this, 'requestTimeoutMs', 60_000);"],
    ['Reflect.get on a library object', "const timeout = Reflect.get(watch, 'requestTimeoutMs');"],
    ['an override of prom-client\'s getForPromString', 'class SeriesHistogram extends Histogram { getForPromString() { return Promise.resolve(values); } }'],
    ['a call of getForPromString', 'const exported = await histogram.getForPromString();'],
    ['ioredis\' command queue', 'const oldest = connection.commandQueue.peekFront();'],
    ['ioredis\' offline queue', 'const waiting = redis.offlineQueue.length;'],
    ['a `_`-prefixed member (@koa/router\'s _matchedRoute)', "const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';"],
    ['an `as unknown as` cast onto a library type', 'const proto = loadPackageDefinition(definition) as unknown as CacheProto;'],
  ])('should reject %s', async (_name, code) => {
    const found = await problems(code);
    expect(found.length).toBeGreaterThan(0);
    expect(found.every((problem) => problem.startsWith('no-restricted-syntax: '))).toBe(true);
  });

  it('should accept public API use and ordinary casts', async () => {
    const code = [
      "const route = ctx.routerPath ?? 'unmatched';",
      'histogram.labels({ method, route, status }).observe(seconds);',
      'const watch = new Watch(config);',
      'const service = object as V1Service;',
      "const value = Reflect.ownKeys === undefined ? 'a' : 'b';",
    ].join('\n');
    expect(await problems(code)).toEqual([]);
  });

  it('should apply the rule to every service and package source file, and not to tests', async () => {
    const rule = await restrictedSyntaxOf('services/graph-controller/src/informer/watchdog-watch.ts');
    expect(Array.isArray(rule) && rule[0]).toBe(2);
    for (const file of ['packages/observability/src/request-metrics.ts', 'packages/http/src/koa.ts', 'services/webhooks/src/app.ts', 'services/auth/src/main.ts']) {
      expect(await restrictedSyntaxOf(file)).toEqual(rule);
    }
    expect(await restrictedSyntaxOf('services/webhooks/test/sms.test.ts')).toBeUndefined();
  });
});
