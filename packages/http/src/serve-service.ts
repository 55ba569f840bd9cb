import type { Logger } from '@sp/observability';
import { startManagementServer } from './management-server.js';
import type { Registry } from '@sp/observability';
import type { ReadinessCheck } from './readiness.js';
import { onShutdown, type ShutdownOptions } from '@sp/core';

/**
 * What a service serves: an API listener (HTTP, gRPC), or the controller's work loop (no
 * listener: `start` resolves with undefined, and draining ends its leadership).
 */
export interface ServedApi<Port extends number | undefined = number | undefined> {
  /** Starts serving; resolves with the port it listens on. */
  start(): Promise<Port>;
  /**
   * Readiness off where clients ask the API itself (gRPC health), besides /readyz. Runs in the
   * first shutdown step, before anything stops.
   */
  stopServing?(): void;
  /** Stops taking work and lets what is in flight finish, cut after `graceMs`. */
  drain(graceMs: number): Promise<void>;
}

export interface ServeServiceOptions<Port extends number | undefined> {
  api: ServedApi<Port>;
  /** The management listener and the grace period, as every service's config names them. */
  config: { managementPort: number; shutdownGraceMs: number };
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  logger: Logger;
  /** What the grace period (SIGTERM to exit) keeps for `close` after the API drained: the drain gets the rest. */
  closeReserveMs: number;
  /** Releases the service's adapters (stores, brokers, pools) once the API drained. */
  close: () => Promise<void>;
  /** Tests: which signals start the shutdown (none) and what exiting does. */
  shutdown?: Pick<ShutdownOptions, 'signals' | 'exit'>;
}

export interface ServedService<Port extends number | undefined> {
  port: Port;
  managementPort: number;
  /** The SIGTERM sequence, for tests and fatal errors. */
  shutdown(): Promise<void>;
}

/**
 * Serves a service as every one of the five runs: the API started, then the management listener
 * (/metrics, /livez, /readyz); on SIGTERM readiness off first (/readyz and the API's own health,
 * so load balancers and probes stop routing), the API drained, the adapters closed, the
 * management listener last (it answers, 503, until the end).
 */
export async function serveService<Port extends number | undefined>(options: ServeServiceOptions<Port>): Promise<ServedService<Port>> {
  const { api, config, logger } = options;
  const port = await api.start();
  const management = await startManagementServer({ port: config.managementPort, registry: options.registry, readiness: options.readiness, logger });
  const shutdown = onShutdown(
    [
      {
        name: 'readiness',
        run: () => {
          management.markShuttingDown();
          api.stopServing?.();
          return Promise.resolve();
        },
      },
      { name: 'api', run: () => api.drain(Math.max(config.shutdownGraceMs - options.closeReserveMs, 0)) },
      { name: 'adapters', run: options.close },
      { name: 'management', run: () => management.close() },
    ],
    { logger, gracePeriodMs: config.shutdownGraceMs, ...options.shutdown },
  );
  return { port, managementPort: management.port, shutdown };
}
