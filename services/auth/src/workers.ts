import cluster from 'node:cluster';
import type { Logger } from '@sp/observability';

/**
 * The primary of `Auth__Workers` > 1: forks that many node:cluster workers, which each run the whole
 * service (they share the HTTPS and management ports; Node's cluster hands connections out round
 * robin). A worker that dies outside a shutdown is replaced. SIGTERM or SIGINT is passed to every
 * worker, which shuts down gracefully as a single process does (Shutdown__GracePeriodMs); the
 * primary exits once all of them have, with 1 if any failed.
 */
export function superviseWorkers(count: number, logger: Logger): void {
  let stopping = false;
  let failed = false;
  const fork = (): void => void cluster.fork();
  cluster.on('exit', (worker, code, signal) => {
    if (stopping) {
      failed ||= code !== 0;
      if (Object.keys(cluster.workers ?? {}).length === 0) process.exit(failed ? 1 : 0);
      return;
    }
    logger.error({ pid: worker.process.pid, code, signal }, 'auth worker died; starting another');
    fork();
  });
  const stop = (signal: NodeJS.Signals): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'stopping the auth workers');
    for (const worker of Object.values(cluster.workers ?? {})) worker?.process.kill(signal);
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  for (let i = 0; i < count; i++) fork();
  logger.info({ workers: count }, 'auth workers starting');
}
