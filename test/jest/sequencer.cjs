// The order of the test files: jest's own (slowest and failed first, from its cache), except that
// the cluster tier (test/cluster) runs last when one jest process runs every tier (`npm test`,
// `make test-only`): its suites first wait for the cluster's commands and images (built in the
// background by `make test`; test/cluster/support/platform.ts), so last they wait for little or
// nothing, and no other test waits behind them. `make test` itself runs the cluster tier in a
// jest process of its own beside the others (lanes.cjs).
const Sequencer = require('@jest/test-sequencer').default;

const isCluster = (test) => test.path.includes('/test/cluster/');

class ClusterLast extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    return [...sorted.filter((test) => !isCluster(test)), ...sorted.filter(isCluster)];
  }
}

module.exports = ClusterLast;
