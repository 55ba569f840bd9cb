// `make release` into a real OCI registry on loopback, as an operator's CI would push a release:
// Debian's docker-registry (the CNCF Distribution registry; test/infra/release-tools.sh) serving
// plain http on 127.0.0.1, where the node's containerd pulls from too (it speaks http to a
// loopback registry without configuration). The release is signed, as a publisher's would be,
// with a throwaway key (support/signing.ts). release.test.ts checks what the release wrote, pushed
// and signed; the upgrade test installs from it by version.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../../deploy/support/service-config.js';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../support/free-port.js';
import { infra } from '../../support/infra.js';
import { infraSh } from './cluster.js';
import { createSigningKey, type SigningKey } from './signing.js';

export interface ReleaseRegistry {
  /** host:port of the registry. */
  address: string;
  /** `oci://<address>/charts/subscription-platform`, the chart's reference for helm. */
  chart: string;
  /** The release folder (chart, SBOMs, images.txt, SHA256SUMS). */
  out: string;
  /** What scripts/release.sh wrote on stderr: its progress lines. */
  log: string;
  /** The key and certificate the release was signed with (SIGNING_KEY, SIGNING_CERT). */
  signer: SigningKey;
  close(): void;
}

/**
 * A registry storing under `dir`, and scripts/release.sh run into it (REGISTRY, PLAIN_HTTP), signed
 * with a key made for it (SIGNING_KEY, SIGNING_CERT), with the release folder under `dir`. The images build here when the cluster install has not built
 * them yet (cold: minutes each).
 */
export async function releaseIntoLocalRegistry(dir: string): Promise<ReleaseRegistry> {
  const address = `127.0.0.1:${await freePort()}`;
  const config = join(dir, 'registry.yml');
  writeFileSync(config, `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'registry')}\nhttp:\n  addr: ${address}\n`);
  const registry = spawn(infra('DOCKER_REGISTRY_BIN'), ['serve', config], { stdio: 'ignore' });
  const close = (): void => void registry.kill('SIGKILL');
  try {
    await eventually(async () => (await fetch(`http://${address}/v2/`).catch(() => undefined))?.status === 200, 30_000, 'the registry to answer /v2/');
    const out = join(dir, 'release');
    const signer = await createSigningKey(join(dir, 'signing'), 'subscription-platform release test');
    const env = { REGISTRY: address, PLAIN_HTTP: '1', SIGNING_KEY: signer.key, SIGNING_CERT: signer.cert, ALLOW_DIRTY: '1', RELEASE_DIR: out };
    const release = await infraSh(join(repoRoot, 'scripts/release.sh'), [], 5_400_000, env);
    if (release.code !== 0) throw new Error(`make release failed:\n${release.stderr.split('\n').slice(-30).join('\n')}`);
    return { address, chart: `oci://${address}/charts/subscription-platform`, out, log: release.stderr, signer, close };
  } catch (error) {
    close();
    throw error;
  }
}
