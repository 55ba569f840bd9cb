import { createServer, type Server } from 'node:http';
import { closeGracefully, listen } from '@sp/http';
import { Registry as PromRegistry } from 'prom-client';
import { createGraphRegistryApp, createGraphStore } from '../../../graph-registry/src/http/app.js';
import type { GraphStore } from '../../../graph-registry/src/graphs/graph-store.js';
import type { CdnSettings } from '../../../graph-registry/src/cdn/artifact-handler.js';
import { createLazySchemaChecker } from '../../../graph-registry/src/schemas/schema-checker.js';
import { silentLogger } from '../../../../test/support/silent-logger.js';

/** A write the registry received, and with which API key (each controller replica gets its own). */
export interface RegistryWrite {
  /** When it arrived: it is recorded then, so a write whose caller gave up is recorded too. */
  at: number;
  method: 'POST' | 'DELETE';
  name: string;
  apiKey: string;
  /**
   * The answer's status once sent; 0 while it is being handled; ABANDONED when the caller closed
   * the connection first (its timeout): the write may have reached the store all the same.
   */
  status: number;
}

/** RegistryWrite.status of a write whose caller went away before the answer. */
export const ABANDONED = -1;

export interface RegistryServer {
  url: string;
  writes: RegistryWrite[];
  /** How many of `writes` have not been answered (or abandoned) yet. */
  inFlight(): number;
  store: GraphStore;
  /** Stops listening and cuts every connection: the registry is down. */
  stop(): Promise<void>;
  /** Listens again on the same port. */
  start(): Promise<void>;
  close(): Promise<void>;
}

/** The real graph registry service (services/graph-registry) over Redis, in this process, on a fixed free port. */
export async function startRegistryServer(redisUrl: string, apiKeys: readonly string[], options: { cdn?: CdnSettings; port?: number } = {}): Promise<RegistryServer> {
  const logger = silentLogger('graph-registry');
  const store = createGraphStore({ kind: 'redis', url: redisUrl }, logger);
  // Its own checker, closed with the server: a schema worker left running keeps jest from exiting.
  const schemaChecker = createLazySchemaChecker();
  const app = createGraphRegistryApp({ store, apiKeys, logger, registry: new PromRegistry(), schemaChecker, ...(options.cdn === undefined ? {} : { cdn: options.cdn }) });
  const handle = app.callback();
  const writes: RegistryWrite[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' || req.method === 'DELETE') {
      const write: RegistryWrite = { at: Date.now(), method: req.method, name: (req.url ?? '/').slice(1), apiKey: String(req.headers['x-api-key']), status: 0 };
      writes.push(write);
      res.on('close', () => {
        write.status = res.writableFinished ? res.statusCode : ABANDONED;
      });
    }
    void handle(req, res);
  });
  const port = await listen(server, options.port ?? 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    writes,
    inFlight: () => writes.filter((write) => write.status === 0).length,
    store,
    async stop() {
      server.closeAllConnections();
      await closeGracefully(server, 100);
    },
    async start() {
      await listen(server, port, '127.0.0.1');
    },
    async close() {
      server.closeAllConnections();
      await closeGracefully(server, 100);
      await schemaChecker.close();
      await store.close();
    },
  };
}
