/**
 * Work that must run last on shutdown, after every service step, such as flushing the tracing
 * exporter (spans of the last requests would be lost otherwise). Kept apart from tracing.ts, so
 * registering a hook loads no OpenTelemetry code.
 */
const hooks: Array<() => Promise<void>> = [];

export function onFinalShutdown(hook: () => Promise<void>): void {
  hooks.push(hook);
}

export async function runFinalShutdownHooks(): Promise<void> {
  for (const hook of hooks) await hook().catch(() => undefined);
}
