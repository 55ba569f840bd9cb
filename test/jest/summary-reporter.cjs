// Prints the closing line CI reads: "N passed, N failed" (with ", N skipped" when any were).
// A suite that fails to load counts as one failure, so a broken file cannot pass silently.
//
// Then it bounds the exit: a test that left a process or server running keeps jest alive after
// the run, and CI would wait for its time limit with the results already printed. Past
// the grace period (60 s; SP_TEST_EXIT_GRACE_MS for this reporter's own test) the run ends with a
// failure that says so. The timer is unref'd: a run that ends cleanly never waits for it.
//
// In `make test`, two jest processes run side by side and lanes.cjs prints their total last: each
// names its tiers before its own line (SP_TEST_LANE) and writes its counts to SP_TEST_COUNTS.
const { writeFileSync } = require('node:fs');

const EXIT_GRACE_MS = Number(process.env.SP_TEST_EXIT_GRACE_MS ?? 60_000);

class SummaryReporter {
  /** "N passed, N failed[, N skipped]": the one form of the line, for a lane's total too (lanes.cjs). */
  static line({ passed, failed, skipped }) {
    return `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;
  }

  onRunComplete(_contexts, results) {
    const failed = results.numFailedTests + results.numRuntimeErrorTestSuites;
    const skipped = results.numPendingTests + results.numTodoTests;
    const line = SummaryReporter.line({ passed: results.numPassedTests, failed, skipped });
    process.stdout.write(`\n${process.env.SP_TEST_LANE ? `${process.env.SP_TEST_LANE}: ` : ''}${line}\n`);
    if (process.env.SP_TEST_COUNTS) writeFileSync(process.env.SP_TEST_COUNTS, JSON.stringify({ passed: results.numPassedTests, failed, skipped }));
    setTimeout(() => {
      process.stderr.write(
        `\njest had not exited ${EXIT_GRACE_MS / 1000} s after the run: a test left a process, server or timer running ` +
          '(find it with --detectOpenHandles). Failing the run instead of waiting for it.\n',
      );
      process.exit(1);
    }, EXIT_GRACE_MS).unref();
  }
}
module.exports = SummaryReporter;
