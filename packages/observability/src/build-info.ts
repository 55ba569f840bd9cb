import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Gauge, type Registry } from 'prom-client';

/** The root package's name: the package.json that carries the platform's version. */
const ROOT_PACKAGE = 'subscription-platform';
/** Semantic Versioning 2.0.0, without build metadata (a `+` is not allowed in an image tag). */
export const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$/;

let version: string | undefined;

/**
 * The platform's version: the `version` of the root package.json, its one source (docs/releasing.md).
 * Found by walking up from this module, so the same code reads the checkout's root in a clone and
 * `/app/package.json` in an image (the Dockerfile copies the root package.json into the bundle).
 */
export function platformVersion(): string {
  version ??= readRootVersion(dirname(fileURLToPath(import.meta.url)));
  return version;
}

function readRootVersion(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = readManifest(join(dir, 'package.json'));
    if (manifest?.name === ROOT_PACKAGE) {
      if (typeof manifest.version !== 'string' || !SEMVER.test(manifest.version)) {
        throw new Error(`${join(dir, 'package.json')}: "version" must be a semantic version, not ${JSON.stringify(manifest.version)}`);
      }
      return manifest.version;
    }
    if (dirname(dir) === dir) throw new Error(`no package.json named ${ROOT_PACKAGE} above ${from}: the platform's version is unknown`);
  }
}

function readManifest(path: string): { name?: unknown; version?: unknown } | undefined {
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown; version?: unknown };
  } catch {
    return undefined;
  }
}

/**
 * `subscription_platform_build_info{version="…"} 1`, the build-info gauge Prometheus exporters
 * carry (prometheus_build_info, …): which release each pod runs, for dashboards and during a
 * rollout. Node's own version is prom-client's `nodejs_version_info`.
 */
export function registerBuildInfo(registry: Registry): void {
  const gauge = new Gauge({
    name: 'subscription_platform_build_info',
    help: 'The platform release this process runs (the root package.json version); always 1.',
    labelNames: ['version'],
    registers: [registry],
  });
  gauge.set({ version: platformVersion() }, 1);
}
