import type { Server } from 'node:http';
import { closeGracefully, listen } from './http-server.js';
import type { Logger } from './logger.js';
import { startManagementServer } from './management-server.js';
import type { Registry } from './metrics.js';
import type { ReadinessCheck } from './readiness.js';
import { onShutdown } from './shutdown.js';

export interface ServeHttpOptions {
  /** The API server (HTTP or HTTPS), not yet listening. */
  server: Server;
  /** The listeners and the grace period, as every service's config names them. */
  config: { port: number; host?: string; managementPort: number; shutdownGraceMs: number };
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  logger: Logger;
  /** What the grace period (SIGTERM to exit) keeps for `close` after the API server stopped. */
  closeReserveMs: number;
  /** Releases the service's adapters (stores, brokers, pools) once no request runs. */
  close: () => Promise<void>;
}

/**
 * Starts an HTTP service as every one of them runs: the API and management listeners, and on
 * SIGTERM readiness off first (so the load balancer stops routing), the API drained, the
 * adapters closed, the management server last. Resolves with the ports it listens on.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<{ port: number; managementPort: number }> {
  const { server, config, logger, registry } = options;
  const port = await listen(server, config.port, config.host);
  const management = await startManagementServer({ port: config.managementPort, registry, readiness: options.readiness, logger });
  onShutdown(
    [
      { name: 'readiness', run: () => Promise.resolve(management.markShuttingDown()) },
      { name: 'api', run: () => closeGracefully(server, Math.max(config.shutdownGraceMs - options.closeReserveMs, 0)) },
      { name: 'adapters', run: options.close },
      { name: 'management', run: () => management.close() },
    ],
    { logger, gracePeriodMs: config.shutdownGraceMs },
  );
  return { port, managementPort: management.port };
}
