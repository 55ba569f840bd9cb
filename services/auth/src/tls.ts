import { readFileSync } from 'node:fs';
import { generate } from 'selfsigned';
import type { Logger } from '@sp/observability';
import type { AuthConfig } from './config.js';

export interface TlsCredentials {
  cert: string;
  key: string;
}

/**
 * A self-signed certificate (EC P-256, SHA-256, 30 days) for localhost, 127.0.0.1, ::1 and the
 * given host names: for local runs and tests only, since no client trusts it by default.
 */
export async function generateSelfSignedCertificate(hostnames: readonly string[] = []): Promise<TlsCredentials> {
  const names = [...new Set(['localhost', ...hostnames])];
  const now = new Date();
  const pems = await generate([{ name: 'commonName', value: names[0]! }], {
    keyType: 'ec',
    curve: 'P-256',
    algorithm: 'sha256',
    notBeforeDate: new Date(now.getTime() - 60_000),
    notAfterDate: new Date(now.getTime() + 30 * 24 * 3600_000),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, critical: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: [...names.map((value) => ({ type: 2 as const, value })), { type: 7, ip: '127.0.0.1' }, { type: 7, ip: '::1' }] },
    ],
  });
  return { cert: pems.cert, key: pems.private };
}

/**
 * The configured certificate and key, or a generated self-signed pair: for the hop from a proxy
 * that terminates TLS (Tls__TerminatedUpstream), or with a warning outside Production (config.ts
 * refuses Production without either).
 */
export async function loadTlsCredentials(config: Pick<AuthConfig, 'tls' | 'publicBaseUrl' | 'tlsTerminatedUpstream'>, logger: Logger): Promise<TlsCredentials> {
  if (config.tls !== undefined) return { cert: readFileSync(config.tls.certPath, 'utf8'), key: readFileSync(config.tls.keyPath, 'utf8') };
  if (config.tlsTerminatedUpstream) logger.info('Tls__TerminatedUpstream=true: TLS ends at the proxy in front; serving it HTTPS with a self-signed certificate generated at start');
  else logger.warn('Tls__CertPath and Tls__KeyPath are not set: serving HTTPS with a self-signed certificate generated at start, which no client trusts (local runs only)');
  const host = new URL(config.publicBaseUrl).hostname;
  return generateSelfSignedCertificate(/^[\d.]+$|:/.test(host) ? [] : [host]);
}
