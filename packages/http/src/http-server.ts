import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Listens and resolves with the bound port (useful with port 0 in tests). */
export function listen(server: Server, port: number, host?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/**
 * Stops accepting connections and resolves once in-flight requests have finished. Idle
 * keep-alive connections are closed at once; connections still busy after `graceMs` are cut.
 */
export function closeGracefully(server: Server, graceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const force = setTimeout(() => server.closeAllConnections(), graceMs);
    force.unref();
    server.close((err) => {
      clearTimeout(force);
      if (err) reject(err);
      else resolve();
    });
    server.closeIdleConnections();
  });
}
