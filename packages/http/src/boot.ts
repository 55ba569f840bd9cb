import type { Registry } from 'prom-client';
import { createLogger, createRegistry, platformVersion, type Logger } from '@sp/observability';
import { installProcessHandlers, loadConfigOrExit } from '@sp/core';

export interface BootedService<T> {
  config: T;
  logger: Logger;
  registry: Registry;
}

/**
 * How every service's main starts: its configuration (or exit 1 naming every problem), a JSON
 * logger at the configured level with the unhandled-rejection and exception handlers installed,
 * and its metrics registry (every series labelled `service`). Its first log line names the
 * service and the platform's version, at every log level (a child logger at `info` writes it).
 */
export function bootService<T extends { logLevel: string }>(service: string, load: () => T): BootedService<T> {
  const config = loadConfigOrExit(load, service);
  const logger = createLogger({ service, level: config.logLevel });
  const version = platformVersion();
  logger.child({}, { level: 'info' }).info({ version, node: process.version }, `${service} ${version} starting`);
  installProcessHandlers(logger);
  return { config, logger, registry: createRegistry(service) };
}
