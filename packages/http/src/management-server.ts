import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import { runReadinessChecks, type ReadinessCheck } from './readiness.js';
import { closeGracefully, listen } from './http-server.js';

export interface ManagementServerOptions {
  port: number;
  host?: string;
  registry: Registry;
  readiness: readonly ReadinessCheck[];
  logger: Logger;
  /** Per-check timeout for /readyz. */
  checkTimeoutMs?: number;
}

export interface ManagementServer {
  port: number;
  server: Server;
  /** From now on /readyz answers 503 (used while shutting down, so the load balancer stops routing). */
  markShuttingDown(): void;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' });
  res.end(JSON.stringify(body));
}

/** The operations listener of every service: /metrics, /livez and /readyz, apart from the API port. */
export async function startManagementServer(options: ManagementServerOptions): Promise<ManagementServer> {
  let shuttingDown = false;
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') return sendJson(res, 405, { error: 'method not allowed' });
    if (path === '/livez') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      if (shuttingDown) return sendJson(res, 503, { status: 'unavailable', failing: ['shutdown'], checks: {} });
      void runReadinessChecks(options.readiness, options.checkTimeoutMs).then((report) => {
        if (!report.ready) options.logger.warn({ failing: report.failing, checks: report.checks }, 'not ready');
        sendJson(res, report.ready ? 200 : 503, {
          status: report.ready ? 'ok' : 'unavailable',
          failing: report.failing,
          checks: report.checks,
        });
      });
      return;
    }
    if (path === '/metrics') {
      void options.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': options.registry.contentType });
          res.end(text);
        },
        (err: unknown) => {
          options.logger.error({ err }, 'metrics collection failed');
          sendJson(res, 500, { error: 'internal server error' });
        },
      );
      return;
    }
    sendJson(res, 404, { error: 'not found' });
  });
  const port = await listen(server, options.port, options.host);
  return {
    port,
    server,
    markShuttingDown: () => {
      shuttingDown = true;
    },
    close: () => closeGracefully(server, 1000),
  };
}
