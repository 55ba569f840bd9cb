import type { Server } from 'node:http';
import { closeGracefully, listen } from './http-server.js';
import type { ServedApi } from './serve-service.js';

/**
 * An HTTP (or HTTPS) API as `serveService` runs every service's API: the server made when serving
 * starts (so a root that is only built, as in tests, opens nothing and needs no TLS files),
 * listening on `port`, drained on SIGTERM after readiness went off.
 */
export function httpApi(makeServer: () => Server | Promise<Server>, listenOn: { port: number; host?: string }): ServedApi<number> {
  let server: Server | undefined;
  return {
    start: async () => {
      server = await makeServer();
      return listen(server, listenOn.port, listenOn.host);
    },
    drain: (graceMs) => (server === undefined ? Promise.resolve() : closeGracefully(server, graceMs)),
  };
}
