// Signing a release and checking its signatures as a platform team does (docs/releasing.md,
// "Signatures"): a throwaway code-signing key and self-signed certificate made with openssl, and
// notation (test/infra/gotools.sh, built once per machine) run with its configuration in a folder
// of the test's, never the user's.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from '../../deploy/support/service-config.js';

const run = promisify(execFile);
const notationBin = join(repoRoot, '.cache/bin/notation');

export interface SigningKey {
  /** The private key (PEM), SIGNING_KEY of `make release`. */
  key: string;
  /** The self-signed certificate (PEM), SIGNING_CERT. */
  cert: string;
  /** The certificate's subject as a trust policy names it: `x509.subject: <subject>`. */
  subject: string;
}

/**
 * A P-256 key and a self-signed certificate under `dir`, as the Notary Project wants a signing
 * certificate: not a CA, key usage digitalSignature, extended key usage codeSigning; a subject
 * with C, ST and O (a trust policy's identity must name at least those).
 */
export async function createSigningKey(dir: string, commonName: string): Promise<SigningKey> {
  mkdirSync(dir, { recursive: true });
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  await run('openssl', [
    'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2',
    '-subj', `/C=XX/ST=Test/O=subscription-platform/CN=${commonName}`, '-keyout', key, '-out', cert,
    '-addext', 'basicConstraints=critical,CA:FALSE', '-addext', 'keyUsage=critical,digitalSignature', '-addext', 'extendedKeyUsage=codeSigning',
  ]);
  return { key, cert, subject: `C=XX, ST=Test, O=subscription-platform, CN=${commonName}` };
}

/** notation with its configuration (keys, trust store, trust policy) under `configHome`. */
export async function notation(configHome: string, args: readonly string[]): Promise<string> {
  const { stdout, stderr } = await run(notationBin, [...args], { env: { ...process.env, XDG_CONFIG_HOME: configHome } });
  return `${stdout}${stderr}`;
}

/**
 * A verifier's notation configuration under `configHome`: `cert` in the trust store
 * `subscription-platform` (type ca) and a trust policy requiring, for each repository of
 * `scopes`, a signature by a certificate of that store with the subject `subject`, strictly
 * (the commands of docs/releasing.md).
 */
export async function trustReleaseSigner(configHome: string, cert: string, subject: string, scopes: readonly string[]): Promise<void> {
  await notation(configHome, ['cert', 'add', '--type', 'ca', '--store', 'subscription-platform', cert]);
  const policy = {
    version: '1.0',
    trustPolicies: [
      {
        name: 'subscription-platform',
        registryScopes: scopes,
        signatureVerification: { level: 'strict' },
        trustStores: ['ca:subscription-platform'],
        trustedIdentities: [`x509.subject: ${subject}`],
      },
    ],
  };
  const file = join(configHome, 'trustpolicy.json');
  writeFileSync(file, `${JSON.stringify(policy, null, 2)}\n`);
  await notation(configHome, ['policy', 'import', file]);
}

/** Signs `reference` (by digest) with `signer`'s key, in a notation configuration of its own under `configHome`. */
export async function signWith(configHome: string, signer: SigningKey, reference: string): Promise<void> {
  mkdirSync(join(configHome, 'notation'), { recursive: true });
  writeFileSync(join(configHome, 'notation/signingkeys.json'), JSON.stringify({ keys: [{ name: 'signer', keyPath: signer.key, certPath: signer.cert }] }));
  await notation(configHome, ['sign', '--insecure-registry', '--key', 'signer', reference]);
}
