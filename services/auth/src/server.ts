import { createServer, type Server } from 'node:https';
import type Koa from 'koa';
import type { TlsCredentials } from './tls.js';

/** The HTTPS server of the app (TLS 1.2 and newer). */
export function createAuthServer(app: Koa, credentials: TlsCredentials): Server {
  const handle = app.callback();
  return createServer({ cert: credentials.cert, key: credentials.key, minVersion: 'TLSv1.2' }, (req, res) => void handle(req, res));
}
