// ES modules throughout: openid-client, jose and @kubernetes/client-node are ESM-only, and
// jest loads them natively under --experimental-vm-modules. @swc/jest strips types only (fast,
// no compiler API needed); `tsc` type-checks separately (`npm run typecheck`).
//
// Three tiers, as jest projects (`--selectProjects unit`, see test/README.md):
// - unit: no dependency, no child process, no infra.env (test/jest/unit-tier.cjs makes infra() throw);
//   in-process servers on 127.0.0.1:0 are allowed. `make test-unit`, under a minute.
// - cluster: the single-node Kubernetes cluster of test/infra/cluster.sh (test/cluster).
// - integration: everything else, against the running dependencies of test/infra/infra.sh.
// The tier is in the file name: `*.unit.test.ts` is unit, any other `*.test.ts` integration
// (cluster: under test/cluster/).

const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2023', keepClassNames: true },
    module: { type: 'es6' },
    sourceMaps: 'inline',
  },
];

const clusterPaths = ['<rootDir>/test/cluster/'];

/** What every tier shares: only which files it runs differs. */
const project = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: { '^.+\\.ts$': swc },
  moduleNameMapper: {
    // Workspace packages resolve to their sources, so tests never run against a stale build.
    '^@sp/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    '^@sp/([a-z-]+)/([a-z-]+)$': '<rootDir>/packages/$1/src/$2.ts',
    // NodeNext imports name the emitted .js file; in tests the .ts source stands behind it. Not a
    // `.json.js` file: libphonenumber-js's ESM build imports its metadata as one, and stripping the
    // `.js` would load the raw JSON instead (another file than production runs, and a jest warning).
    '^(\\.{1,2}/.*)(?<!\\.json)\\.js$': '$1',
  },
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/test'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/', '/.cache/'],
  testTimeout: 30_000,
};

/** @type {import('jest').Config} */
export default {
  testTimeout: 30_000,
  testSequencer: '<rootDir>/test/jest/sequencer.cjs',
  reporters: ['default', '<rootDir>/test/jest/summary-reporter.cjs'],
  projects: [
    {
      ...project,
      displayName: 'unit',
      testMatch: ['**/test/**/*.unit.test.ts'],
      setupFiles: ['<rootDir>/test/jest/unit-tier.cjs'],
    },
    {
      ...project,
      displayName: 'integration',
      testMatch: ['**/test/**/*.test.ts'],
      testPathIgnorePatterns: [...project.testPathIgnorePatterns, '\\.unit\\.test\\.ts$', ...clusterPaths],
    },
    {
      ...project,
      displayName: 'cluster',
      testMatch: clusterPaths.map((path) => `${path}**/*.test.ts`),
    },
  ],
};
