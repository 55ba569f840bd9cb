import { withDeadline } from './deadline.js';

/**
 * Work that must run last on shutdown, after every service step, such as flushing the tracing
 * exporter (spans of the last requests would be lost otherwise). Kept apart from tracing.ts, so
 * registering a hook loads no OpenTelemetry code.
 */
const hooks: Array<() => Promise<void>> = [];

export function onFinalShutdown(hook: () => Promise<void>): void {
  hooks.push(hook);
}

/**
 * Runs the hooks, giving up after `budgetMs`: an unreachable collector must not hold the process
 * past its shutdown grace period (what was not flushed by then is lost, as on a crash).
 */
export async function runFinalShutdownHooks(budgetMs: number): Promise<void> {
  const all = (async () => {
    for (const hook of hooks) await hook().catch(() => undefined);
  })();
  await withDeadline(all, Math.max(0, budgetMs), { hard: true }).catch(() => undefined);
}
