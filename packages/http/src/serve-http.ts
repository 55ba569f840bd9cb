import type { Server } from 'node:http';
import { closeGracefully, listen } from './http-server.js';
import { serveService, type ServeServiceOptions } from './serve-service.js';

export interface ServeHttpOptions extends Omit<ServeServiceOptions<number>, 'api' | 'config'> {
  /** The API server (HTTP or HTTPS), not yet listening. */
  server: Server;
  /** The listeners and the grace period, as every service's config names them. */
  config: { port: number; host?: string; managementPort: number; shutdownGraceMs: number };
}

/**
 * Serves an HTTP service with the platform's sequence (serveService): the API server listening
 * on `config.port`, drained on SIGTERM after readiness went off. Resolves with the ports.
 */
export async function serveHttp(options: ServeHttpOptions): Promise<{ port: number; managementPort: number }> {
  const { server, config } = options;
  const { port, managementPort } = await serveService({
    ...options,
    api: {
      start: () => listen(server, config.port, config.host),
      drain: (graceMs) => closeGracefully(server, graceMs),
    },
  });
  return { port, managementPort };
}
