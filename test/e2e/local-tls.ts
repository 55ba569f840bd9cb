// The TLS of `make up` for the end-to-end suite: the auth service's certificate is signed by the
// local CA that Keycloak trusts (test/infra/local-ca.sh, keycloak.sh start), through the same
// script `make up` issues its own with, so Keycloak's back-channel logout reaches the suite's
// instances exactly as it reaches `make up`'s.
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { infra } from '../support/infra.js';

const localCaScript = fileURLToPath(new URL('../infra/local-ca.sh', import.meta.url));

export interface IssuedCertificate {
  /** For Tls__CertPath and Tls__KeyPath. */
  certPath: string;
  keyPath: string;
  /** Deletes the files (the auth service reads them at start only). */
  remove(): void;
}

/** A server certificate for `names` (host names, IP addresses) signed by the local CA, in a temporary folder. */
export async function issueLocalCertificate(names: readonly string[] = ['localhost', '127.0.0.1']): Promise<IssuedCertificate> {
  const dir = mkdtempSync(join(tmpdir(), 'sp-e2e-tls-'));
  await promisify(execFile)('bash', [localCaScript, 'issue', dir, ...names]);
  return { certPath: join(dir, 'tls.crt'), keyPath: join(dir, 'tls.key'), remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** The certificate (PEM) of the local CA the running Keycloak trusts: what a client of the auth service trusts too. */
export function localCaCertificate(): string {
  return readFileSync(infra('KEYCLOAK_TRUSTED_CA'), 'utf8');
}
