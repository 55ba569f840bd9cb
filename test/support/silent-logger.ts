import { Writable } from 'node:stream';
import { createLogger, type Logger } from '@sp/observability';

/** A logger that drops everything, for services started inside tests. */
export function silentLogger(service = 'test'): Logger {
  return createLogger({ service, level: 'silent', destination: new Writable({ write: (_chunk, _encoding, callback) => callback() }) });
}
