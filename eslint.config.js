import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { createTypeScriptImportResolver } from 'eslint-import-resolver-typescript';
import importX from 'eslint-plugin-import-x';

const PRIVATE_MEMBER = 'Use the dependency\'s public, documented API: private members change without notice on upgrade.';

/**
 * Private or undocumented members of dependencies, in service and package sources: reflection on
 * library objects, the internals issue 20 removed (prom-client's getForPromString, ioredis' command
 * and offline queues), `_`-prefixed members, and `as unknown as` casts that force a library object
 * into a shape of our own. test/lint/private-members.unit.test.ts proves each pattern is caught.
 */
const privateMemberRules = [
  {
    selector: "CallExpression[callee.object.name='Reflect'][callee.property.name=/^(get|set|has|apply|construct|defineProperty|deleteProperty|getOwnPropertyDescriptor|ownKeys)$/]",
    message: `Reflect on an object reaches around its API. ${PRIVATE_MEMBER}`,
  },
  { selector: 'MemberExpression[property.name=/^(getForPromString|commandQueue|offlineQueue)$/]', message: `Undocumented internal. ${PRIVATE_MEMBER}` },
  { selector: 'MethodDefinition[key.name=/^(getForPromString)$/]', message: `Overrides an undocumented internal. ${PRIVATE_MEMBER}` },
  { selector: 'MemberExpression[property.name=/^_/]', message: `A \`_\`-prefixed member is private. ${PRIVATE_MEMBER}` },
  { selector: 'TSPropertySignature[key.name=/^_/]', message: `A \`_\`-prefixed member is private. ${PRIVATE_MEMBER}` },
  {
    selector: "TSAsExpression[expression.type='TSAsExpression'][expression.typeAnnotation.type='TSUnknownKeyword']",
    message: `\`as unknown as\` forces a value into a shape its type does not promise. ${PRIVATE_MEMBER}`,
  },
];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.cache/**', 'coverage/**', '**/*.js', '**/*.cjs', '**/*.mjs', 'packages/cache-client/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { project: './tsconfig.all.json', tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      complexity: ['error', 10],
      'max-depth': ['error', 3],
      'max-params': ['error', 4],
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-properties': [
        'error',
        { object: 'process', property: 'env', message: 'Read the environment only in src/config.ts (or pass it in).' },
      ],
    },
  },
  {
    files: ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts'],
    rules: { 'no-restricted-syntax': ['error', ...privateMemberRules] },
  },
  {
    // No import cycles in sources: a module that imports, through any chain, a module importing it
    // back is loaded half-initialised. import-x follows `./x.js` to `x.ts` through the TypeScript
    // resolver; type-only imports are erased at build and are not followed (import-x's rule), nor are
    // dependencies in node_modules (ignoreExternal: parsing their typings almost doubled the CPU time of linting src).
    // test/lint/import-cycles.unit.test.ts proves a cycle is caught.
    files: ['packages/*/src/**/*.ts', 'services/*/src/**/*.ts'],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/extensions': ['.ts'],
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/resolver-next': [createTypeScriptImportResolver({ project: './tsconfig.all.json' })],
    },
    rules: { 'import-x/no-cycle': ['error', { ignoreExternal: true }] },
  },
  {
    files: ['**/src/config.ts', '**/src/tracing.ts', '**/test/**', 'test/**', 'bench/**', 'scripts/**', '*.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/test/**', 'test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', 'max-params': 'off' },
  },
);
