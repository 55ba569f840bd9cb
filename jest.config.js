// ES modules throughout: openid-client, jose and @kubernetes/client-node are ESM-only, and
// jest loads them natively under --experimental-vm-modules. @swc/jest strips types only (fast,
// no compiler API needed); `tsc` type-checks separately (`npm run typecheck`).
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023', keepClassNames: true },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

/** @type {import('jest').Config} */
export default {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    // Workspace packages resolve to their sources, so tests never run against a stale build.
    '^@sp/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^@sp/([a-z-]+)/([a-z-]+)$': '<rootDir>/packages/$1/src/$2.ts',
    // NodeNext imports name the emitted .js file; in tests the .ts source stands behind it.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testMatch: ['**/test/**/*.test.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.cache/'],
  testTimeout: 30_000,
  reporters: ['default', '<rootDir>/test/jest/summary-reporter.cjs'],
};
