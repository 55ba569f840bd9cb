// A private certificate authority the cluster suite makes with openssl, and a server certificate
// it signs: the https Keycloak of the Production auth test presents it, and the auth chart trusts
// the CA through its caBundle (NODE_EXTRA_CA_CERTS), as a user with an internal CA would.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

const openssl = async (args: readonly string[]): Promise<void> => void (await promisify(execFile)('openssl', args));

export interface ServerCertificate {
  /** The CA certificate (PEM, and its file): what clients must trust. */
  caPem: string;
  caFile: string;
  /** Files of the server's certificate and key (PEM), signed by the CA. */
  certFile: string;
  keyFile: string;
}

/** A CA and one server certificate for these IP addresses, written under `dir`. */
export async function makeServerCertificate(dir: string, ips: readonly string[]): Promise<ServerCertificate> {
  const file = (name: string): string => join(dir, name);
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('ca.key'), '-out', file('ca.crt'), '-days', '2', '-subj', '/CN=sp-e2e private CA',
    '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', file('server.key'), '-out', file('server.csr'), '-subj', '/CN=keycloak']);
  writeFileSync(file('server.ext'), `subjectAltName=${ips.map((ip) => `IP:${ip}`).join(',')}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`);
  await openssl(['x509', '-req', '-in', file('server.csr'), '-CA', file('ca.crt'), '-CAkey', file('ca.key'), '-CAcreateserial', '-out', file('server.crt'), '-days', '2', '-extfile', file('server.ext')]);
  return { caPem: readFileSync(file('ca.crt'), 'utf8'), caFile: file('ca.crt'), certFile: file('server.crt'), keyFile: file('server.key') };
}
