import type { Logger } from 'pino';
import { ConfigError } from './config.js';
import { runFinalShutdownHooks } from './final-hooks.js';
import { endLogs } from './log-exit.js';

/** The end of the grace period kept to write the last log lines and exit (a stopped reader cannot hold the exit longer). */
const LOG_RESERVE_MS = 250;

export interface ShutdownStep {
  name: string;
  run: () => Promise<void>;
}

export interface ShutdownOptions {
  logger: Logger;
  /** Everything must be done by then; past it the process exits 1. */
  gracePeriodMs: number;
  signals?: readonly NodeJS.Signals[];
  exit?: (code: number) => void;
}

/**
 * On SIGTERM (or SIGINT) runs the steps in order — typically: fail readiness, stop accepting
 * and drain in-flight requests, flush the producer, close connections — then exits 0.
 * A step that fails is logged and the next still runs; exceeding the grace period exits 1.
 * Returns the shutdown function, so tests and fatal errors can trigger the same sequence.
 */
export function onShutdown(steps: readonly ShutdownStep[], options: ShutdownOptions): () => Promise<void> {
  // The process' own exit writes the last log lines first, within what is left of the grace period.
  const exit = async (code: number, budgetMs: number): Promise<void> => {
    if (options.exit !== undefined) return options.exit(code);
    await endLogs(budgetMs);
    process.exit(code);
  };
  let running: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    running ??= (async () => {
      options.logger.info({ gracePeriodMs: options.gracePeriodMs }, 'shutting down');
      const startedAt = Date.now();
      const deadline = setTimeout(() => {
        options.logger.error('shutdown exceeded the grace period, exiting');
        void exit(1, LOG_RESERVE_MS);
      }, Math.max(0, options.gracePeriodMs - LOG_RESERVE_MS));
      deadline.unref();
      for (const step of steps) {
        const started = Date.now();
        try {
          await step.run();
          options.logger.debug({ step: step.name, ms: Date.now() - started }, 'shutdown step done');
        } catch (err) {
          options.logger.error({ err, step: step.name }, 'shutdown step failed');
        }
      }
      const flushStarted = Date.now();
      // Whatever the steps left of the grace period, less the deadline's reserve and as much again
      // before it: hooks cut at their budget (a collector that never answers) end before the
      // deadline fires, not with it (which exited 1 from a shutdown that was on time).
      await runFinalShutdownHooks(options.gracePeriodMs - (Date.now() - startedAt) - 2 * LOG_RESERVE_MS);
      options.logger.debug({ ms: Date.now() - flushStarted }, 'final shutdown hooks done');
      clearTimeout(deadline);
      options.logger.info('shutdown complete');
      await exit(0, options.gracePeriodMs - (Date.now() - startedAt));
    })();
    return running;
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) process.once(signal, () => void shutdown());
  return shutdown;
}

/** An unhandled rejection or exception is a bug: log it as fatal and exit non-zero, never limp on. */
export function installProcessHandlers(logger: Logger): void {
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection');
    logger.flush();
    process.exit(1);
  });
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception');
    logger.flush();
    process.exit(1);
  });
}

/** Loads configuration, or prints one line per problem to stderr and exits 1. */
export function loadConfigOrExit<T>(load: () => T, service: string): T {
  try {
    return load();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    for (const problem of err.problems) process.stderr.write(`${service}: invalid configuration: ${problem}\n`);
    process.exit(1);
  }
}
