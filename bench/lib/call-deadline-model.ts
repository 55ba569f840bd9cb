// What a reply deadline costs per call, in this process (docs: CHANGELOG, "Redis reply deadline"):
// a call whose answer comes in a later macrotask, as a socket's does, 50 in flight, without a
// deadline, with `withDeadline` (a timer and a Promise.race per call, as the Redis store base had
// it) and with `createCallWatchdog` (one timer per client). CPU µs per call, median of 7 rounds.
//   npm run build && node --import tsx bench/lib/call-deadline-model.ts
import { createCallWatchdog, withDeadline } from '@sp/core';

const CALLS = 200_000;
const IN_FLIGHT = 50;
const ROUNDS = 7;

const watchdog = createCallWatchdog(1000, { what: 'Redis reply', onTimeout: () => undefined });
const variants: Record<string, (call: () => Promise<number>) => Promise<number>> = {
  none: (call) => call(),
  withDeadline: (call) => withDeadline(call(), 1000, { what: 'Redis reply', onTimeout: () => undefined }),
  watchdog: (call) => watchdog.watch(call),
};
const answer = (): Promise<number> => new Promise((resolve) => setImmediate(() => resolve(1)));

async function cpuPerCall(wrap: (call: () => Promise<number>) => Promise<number>): Promise<number> {
  const before = process.cpuUsage();
  let sent = 0;
  const caller = async (): Promise<void> => {
    while (sent < CALLS) {
      sent++;
      await wrap(answer);
    }
  };
  await Promise.all(Array.from({ length: IN_FLIGHT }, caller));
  const used = process.cpuUsage(before);
  return (used.user + used.system) / CALLS;
}

const figures = Object.fromEntries(Object.keys(variants).map((name) => [name, [] as number[]]));
for (let round = 0; round < ROUNDS; round++) for (const [name, wrap] of Object.entries(variants)) figures[name]!.push(await cpuPerCall(wrap));
const median = (values: number[]): number => [...values].sort((a, b) => a - b)[values.length >> 1]!;
for (const name of Object.keys(variants)) {
  const cost = median(figures[name]!) - median(figures.none!);
  process.stdout.write(`${name.padEnd(13)} ${median(figures[name]!).toFixed(3)} µs CPU per call, the deadline's own ${cost.toFixed(3)} µs\n`);
}
