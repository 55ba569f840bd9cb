// The order of the test files: jest's own (slowest and failed first, from its cache), except that
// the cluster tier (test/cluster) runs last. `make test` builds the single-node cluster's commands
// and images beside the other tiers, and the cluster suite waits for that install
// (test/cluster/cluster.test.ts): last, it waits for little or nothing, and no other test waits
// behind it.
const Sequencer = require('@jest/test-sequencer').default;

const isCluster = (test) => test.path.includes('/test/cluster/');

class ClusterLast extends Sequencer {
  async sort(tests) {
    const sorted = await super.sort(tests);
    return [...sorted.filter((test) => !isCluster(test)), ...sorted.filter(isCluster)];
  }
}

module.exports = ClusterLast;
