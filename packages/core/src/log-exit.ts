import { errorMonitor, type EventEmitter } from 'node:events';
import { withDeadline } from './deadline.js';

/**
 * What exiting needs of an asynchronous log destination (pino's `pino.destination({ sync: false })`,
 * a sonic-boom stream): `end` writes what it holds, then emits 'close'; `destroy` drops it.
 */
export interface LogDestination extends EventEmitter {
  end(): void;
  destroy(): void;
}

/** The destinations not closed yet, and whether their reader is gone (EPIPE: nothing more can be written). */
const destinations = new Map<LogDestination, { broken: boolean }>();

/**
 * Registers a destination for `endLogs`. Observes its errors without handling them
 * (`errorMonitor`), so its logger's own handling stays as it is: after an EPIPE (the process
 * that spawned this one died) pino stops writing, silently, and `endLogs` must not wait for it.
 */
export function trackLogDestination(destination: LogDestination): void {
  const state = { broken: false };
  destinations.set(destination, state);
  destination.on(errorMonitor, (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') state.broken = true;
  });
  destination.once('close', () => destinations.delete(destination));
}

/**
 * Writes what the destinations still hold within `budgetMs`, then makes sure exiting writes
 * nothing. pino writes standard output asynchronously and, at `process.exit`, flushes the rest
 * synchronously, retrying every 100 ms for as long as the pipe is full (a reader that stopped
 * reading) or, in sonic-boom 4, closed (EPIPE, a parent that died): that flush held the process
 * past its grace period, deaf to further SIGTERMs. Past the budget the lines not written are
 * lost, as on a crash.
 */
export async function endLogs(budgetMs: number): Promise<void> {
  await Promise.all([...destinations].map(([destination, state]) => endDestination(destination, state.broken, budgetMs)));
}

async function endDestination(destination: LogDestination, broken: boolean, budgetMs: number): Promise<void> {
  if (!broken) {
    const ended = new Promise<void>((resolve) => {
      destination.once('close', () => resolve());
      destination.once(errorMonitor, () => resolve());
    });
    destination.end();
    await withDeadline(ended, Math.max(0, budgetMs), { hard: true }).catch(() => undefined);
  }
  // Not closed: drops what is left (after an EPIPE pino made destroy a no-op, and its synchronous flush too).
  if (destinations.has(destination)) destination.destroy();
}
