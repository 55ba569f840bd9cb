import { createServer, type Server } from 'node:https';
import type Koa from 'koa';
import { requestListener } from '@sp/platform';
import type { TlsCredentials } from './tls.js';

/** The HTTPS server of the app (TLS 1.2 and newer). */
export function createAuthServer(app: Koa, credentials: TlsCredentials): Server {
  return createServer({ cert: credentials.cert, key: credentials.key, minVersion: 'TLSv1.2' }, requestListener(app));
}
