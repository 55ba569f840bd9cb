import type { Registry } from 'prom-client';
import { createLogger, type Logger } from '@sp/observability';
import { createRegistry } from '@sp/observability';
import { installProcessHandlers, loadConfigOrExit } from '@sp/core';

export interface BootedService<T> {
  config: T;
  logger: Logger;
  registry: Registry;
}

/**
 * How every service's main starts: its configuration (or exit 1 naming every problem), a JSON
 * logger at the configured level with the unhandled-rejection and exception handlers installed,
 * and its metrics registry (every series labelled `service`).
 */
export function bootService<T extends { logLevel: string }>(service: string, load: () => T): BootedService<T> {
  const config = loadConfigOrExit(load, service);
  const logger = createLogger({ service, level: config.logLevel });
  installProcessHandlers(logger);
  return { config, logger, registry: createRegistry(service) };
}
