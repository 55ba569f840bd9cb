import { errorMonitor, type EventEmitter } from 'node:events';
import { withDeadline } from './deadline.js';

/**
 * What exiting needs of an asynchronous log destination (pino's `pino.destination({ sync: false })`,
 * a sonic-boom stream): `end` writes what it holds, then emits 'close'; `destroy` drops it.
 */
export interface LogDestination extends EventEmitter {
  write(line: string): boolean;
  flush(callback: (err?: Error) => void): void;
  end(): void;
  destroy(): void;
}

/** What a logger writes to (pino's `DestinationStream`, with the `flush` its `logger.flush` calls). */
export interface EndableLogDestination {
  write(line: string): void;
  flush(callback?: (err?: Error) => void): void;
}

interface DestinationState {
  /** The reader is gone (EPIPE): nothing more can be written. */
  broken: boolean;
  /** `endLogs` has begun: the destination may close at any moment from here on. */
  ending: boolean;
}

/** The destinations not closed yet. */
const destinations = new Map<LogDestination, DestinationState>();

/**
 * The destination a logger writes to, registered for `endLogs`. Observes the stream's errors
 * without handling them (`errorMonitor`), so its own handling stays as it is: after an EPIPE (the
 * process that spawned this one died) pino stops writing, silently, and `endLogs` must not wait
 * for it. Once `endLogs` has begun, a line the stream no longer takes (closed: it throws) is
 * dropped: the timers and connections of a process that exits go on logging to its last moment,
 * and a throw there reached the fatal handler, whose own line threw again (Node's exit status 7).
 */
export function endableLogDestination(stream: LogDestination): EndableLogDestination {
  const state: DestinationState = { broken: false, ending: false };
  destinations.set(stream, state);
  stream.on(errorMonitor, (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') state.broken = true;
  });
  stream.once('close', () => destinations.delete(stream));
  return {
    write(line) {
      try {
        stream.write(line);
      } catch (err) {
        // Closed by endLogs: the process is exiting and this line is lost, as on a crash.
        if (!state.ending) throw err;
      }
    },
    flush(callback = () => undefined) {
      stream.flush(callback);
    },
  };
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
  await Promise.all([...destinations].map(([stream, state]) => endDestination(stream, state, budgetMs)));
}

async function endDestination(stream: LogDestination, state: DestinationState, budgetMs: number): Promise<void> {
  state.ending = true;
  if (!state.broken) {
    const ended = new Promise<void>((resolve) => {
      stream.once('close', () => resolve());
      stream.once(errorMonitor, () => resolve());
    });
    stream.end();
    await withDeadline(ended, Math.max(0, budgetMs), { hard: true }).catch(() => undefined);
  }
  // Not closed: drops what is left (after an EPIPE pino made destroy a no-op, and its synchronous flush too).
  if (destinations.has(stream)) stream.destroy();
}
