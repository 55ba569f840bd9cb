import type { RequestListener } from 'node:http';
import { createServer, type Server } from 'node:https';
import type { TlsCredentials } from './tls.js';

/** The HTTPS server of the service's request listener (TLS 1.2 and newer). */
export function createAuthServer(listener: RequestListener, credentials: TlsCredentials): Server {
  return createServer({ cert: credentials.cert, key: credentials.key, minVersion: 'TLSv1.2' }, listener);
}
