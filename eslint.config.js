import js from '@eslint/js';
import tseslint from 'typescript-eslint';

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
    files: ['**/src/config.ts', '**/src/tracing.ts', '**/test/**', 'test/**', 'bench/**', 'scripts/**', '*.js'],
    rules: { 'no-restricted-properties': 'off' },
  },
  {
    files: ['**/test/**', 'test/**', 'bench/**'],
    rules: { '@typescript-eslint/no-non-null-assertion': 'off', 'max-params': 'off' },
  },
);
