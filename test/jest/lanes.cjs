// `make test`'s jest run in two lanes side by side: the cluster tier in one jest process, the unit
// and integration tiers in another. Each tier runs its suites one at a time (jest's one worker on
// two cores), and the cluster tier's ~12 minutes are mostly waits on the node (images imported,
// Pods started, helm), so beside the other tiers instead of after them they take little of the
// run's wall time. Two tiers at once is also what a busy machine does to the suite (issue 40), so
// this is no new condition for the tests.
//
// When another `make test` runs on this machine (another clone's, or a second one of this clone),
// the lanes run one after the other: two runs of two lanes each would be four jest processes on
// two cores, each test then taking twice as long as on a machine twice as busy. The runs under way
// are listed by a file each in the machine-wide cache (`runs/`, beside the built tools), removed at
// the end; a file whose process is gone is stale and removed by the next run that sees it.
//
// The main lane's output goes to the screen as it comes; the cluster lane's to
// .cache/logs/cluster-tier.log, printed whole after the main lane ends (two jest screens
// interleaved would be unreadable). The last line is the total of both lanes, as CI reads it:
// "N passed, N failed" (summary-reporter.cjs writes each lane's counts to SP_TEST_COUNTS). A lane
// that ends without counts (jest itself failed) counts as one failure.
const { spawn } = require('node:child_process');
const { createWriteStream, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } = require('node:fs');
const { constants, homedir } = require('node:os');
const { join } = require('node:path');
const SummaryReporter = require('./summary-reporter.cjs');

const root = join(__dirname, '../..');
const logs = join(root, '.cache/logs');

/** The machine-wide cache of test/infra/lib.sh (SHARED): the runs under way are listed in its runs/. */
const runs = join(process.env.SUBSCRIPTION_PLATFORM_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'subscription-platform'), 'runs');
const ownRun = join(runs, `make-test-${process.pid}`);

/** Whether process `pid` runs (EPERM: it does, as another user's). */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/** Lists this run, and answers the checkouts of the other runs under way (removing the files of runs that ended without removing them). */
function otherRuns() {
  mkdirSync(runs, { recursive: true });
  writeFileSync(ownRun, root);
  const others = [];
  for (const name of readdirSync(runs)) {
    const pid = Number(/^make-test-(\d+)$/.exec(name)?.[1]);
    if (!pid || pid === process.pid) continue;
    if (alive(pid)) others.push(readFileSync(join(runs, name), 'utf8'));
    else rmSync(join(runs, name), { force: true });
  }
  return others;
}

/** "the cluster tier", "the unit and integration tiers". */
const tiers = (lane) => `the ${lane.projects.join(' and ')} tier${lane.projects.length > 1 ? 's' : ''}`;

/** Runs one jest process on a lane's tiers (through `npm test`, as a developer would), its counts written to `counts`. */
function jest(lane, counts, stdio) {
  const child = spawn('npm', ['test', '--silent', '--', '--selectProjects', ...lane.projects], {
    cwd: root,
    stdio,
    env: { ...process.env, SP_TEST_COUNTS: counts, SP_TEST_LANE: tiers(lane) },
  });
  return { child, done: new Promise((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 1 : 0)))) };
}

/** The counts a lane's reporter wrote, or one failure when it wrote none. */
function countsOf(what, file) {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch {
    process.stdout.write(`${what} ended without its counts (jest failed before its summary): one failure\n`);
    return { passed: 0, failed: 1, skipped: 0 };
  }
}

/** The two lanes: the cluster tier's output goes to its log, the other's to the screen. */
const LANES = [
  { name: 'cluster', projects: ['cluster'], log: join(logs, 'cluster-tier.log') },
  { name: 'main', projects: ['unit', 'integration'] },
];

/** Starts a lane; `done` resolves with its exit status once its output is all on screen or in its log. */
function startLane(lane, beside) {
  const counts = join(logs, `jest-${lane.name}.counts.json`);
  rmSync(counts, { force: true });
  if (!lane.log) return { ...lane, counts, done: jest(lane, counts, 'inherit').done };
  process.stdout.write(`${tiers(lane)} runs ${beside ? 'beside the others' : 'now'}; its output: ${lane.log} (printed when ${beside ? 'the others end' : 'it ends'})\n`);
  const out = createWriteStream(lane.log);
  const run = jest(lane, counts, ['ignore', 'pipe', 'pipe']);
  run.child.stdout.pipe(out, { end: false });
  run.child.stderr.pipe(out, { end: false });
  return { ...lane, counts, done: run.done.then((code) => new Promise((resolve) => out.end(() => resolve(code)))) };
}

async function main() {
  mkdirSync(logs, { recursive: true });
  const others = otherRuns();
  let started;
  if (others.length === 0) started = LANES.map((lane) => startLane(lane, true));
  else {
    process.stdout.write(`another make test runs on this machine (${others.join(', ')}): the cluster tier runs after the others, not beside them\n`);
    started = [];
    // The lane on screen first (LANES lists the cluster lane first, so that its note comes before that screen).
    for (const lane of [...LANES].reverse()) {
      const run = startLane(lane, false);
      started.push(run);
      await run.done;
    }
  }
  let status = 0;
  for (const lane of started.filter((lane) => !lane.log)) status = (await lane.done) || status;
  for (const lane of started.filter((lane) => lane.log)) {
    status = (await lane.done) || status;
    process.stdout.write(`\n── ${tiers(lane)} (${lane.log}) ──\n${readFileSync(lane.log, 'utf8')}`);
  }
  const total = started.map((lane) => countsOf(tiers(lane), lane.counts)).reduce((a, b) => ({ passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped }));
  process.stdout.write(`\n${SummaryReporter.line(total)}\n`);
  process.exitCode = status || (total.failed > 0 ? 1 : 0);
}

// This run's entry goes with it, however it ends (an interrupted run's is removed by the next one).
process.once('exit', () => rmSync(ownRun, { force: true }));
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(128 + constants.signals[signal]));

main().catch((error) => {
  process.stderr.write(`${error.stack}\n`);
  process.exitCode = 1;
});
