// Waits bounded by progress instead of a wall-clock guess. How long a process takes to start, or a
// bulk write or a listing takes to finish, depends on how busy the machine is: a limit that fits a
// quiet machine fails on a loaded one (issue 40: services "not started within 30 s" at load 8–13).
// So these waits go on for as long as the work visibly gets somewhere (a process using CPU or
// writing lines, a count growing, bytes arriving) and fail once it has stopped getting anywhere
// for `stallMs`; the exit of a process fails them at once. HANG_GUARD_MS bounds what keeps
// "progressing" without ever finishing (a process retrying forever).
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** How long without any sign of progress a wait takes for stuck (a busy machine still gives every process some CPU each second). */
export const STALL_MS = 30_000;

/**
 * The outer bound of a progress-bound wait, and the jest timeout of a test or hook whose waits are
 * all progress-bound: not how long the work is expected to take, only when to give up on work
 * that keeps making progress without ever finishing.
 */
export const HANG_GUARD_MS = 10 * 60_000;

/** Clock ticks per second of /proc/<pid>/stat (USER_HZ: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/**
 * CPU time (ms, user + system) a process and its children it waited for (a script's commands)
 * have used so far; undefined once it is gone, or off Linux.
 */
export function cpuTimeMs(pid: number): number | undefined {
  try {
    // The command name (field 2) may hold spaces: count from the parenthesis that closes it.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime, stime, cutime and cstime are fields 14 to 17 of the line, so 12 to 15 after the command name.
    return (fields.slice(11, 15).reduce((sum, field) => sum + Number(field), 0) * 1000) / TICKS_PER_SECOND;
  } catch {
    return undefined;
  }
}

/** Why `child` can no longer get anywhere (it exited), or undefined while it runs: for ProgressBound.gone. */
export function exitOf(child: Pick<ChildProcess, 'exitCode' | 'signalCode'>): string | undefined {
  return child.exitCode === null && child.signalCode === null ? undefined : `exited (${child.exitCode ?? child.signalCode})`;
}

/** A process's signs of progress: the CPU time it used, and what `more` says (e.g. how many lines it wrote). */
export function processProgress(pid: number | undefined, ...more: Array<() => unknown>): () => unknown[] {
  return () => [pid === undefined ? undefined : cpuTimeMs(pid), ...more.map((sign) => sign())];
}

/** Since when `progress` has shown the same value: call `stalledMs()` at each poll. Errors count as no change. */
export function stallClock(progress: () => unknown): { stalledMs(): Promise<number>; last(): string } {
  let last: string | undefined;
  let changedAt = Date.now();
  return {
    async stalledMs() {
      const now = JSON.stringify(await Promise.resolve().then(progress).catch((err: unknown) => `error: ${(err as Error).message}`));
      if (now !== last) {
        last = now;
        changedAt = Date.now();
      }
      return Date.now() - changedAt;
    },
    last: () => last ?? '(none yet)',
  };
}

export interface ProgressBound {
  /** Signs of progress; any change of its value from one poll to the next is progress. */
  progress: () => unknown;
  /** No progress for this long fails the wait (default STALL_MS). */
  stallMs?: number;
  /** Fails the wait regardless (default HANG_GUARD_MS). */
  hangGuardMs?: number;
  /** Why the work can no longer finish (e.g. exitOf its process): fails the wait at once. */
  gone?: () => string | undefined;
}

/**
 * Runs `work` and watches `progress` beside it: rejects (and aborts `work`'s signal) once progress
 * has not changed for `stallMs`, or at the hang guard; otherwise resolves as `work` does.
 */
export async function whileProgressing<T>(what: string, bound: ProgressBound, work: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const { stallMs = STALL_MS, hangGuardMs = HANG_GUARD_MS } = bound;
  const controller = new AbortController();
  const clock = stallClock(bound.progress);
  const began = Date.now();
  let finished = false;
  const watchdog = (async (): Promise<never> => {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (finished) return new Promise<never>(() => undefined);
      const stalled = await clock.stalledMs();
      const problem =
        bound.gone?.() ??
        (stalled > stallMs ? `made no progress for ${stallMs} ms (progress: ${clock.last()})` : Date.now() - began > hangGuardMs ? `kept going past the hang guard of ${hangGuardMs} ms` : undefined);
      if (problem !== undefined) {
        controller.abort(new Error(`${what}: ${problem}`));
        throw controller.signal.reason as Error;
      }
    }
  })();
  try {
    return await Promise.race([work(controller.signal), watchdog]);
  } finally {
    finished = true;
  }
}
