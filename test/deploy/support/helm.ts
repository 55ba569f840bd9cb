import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { infra } from '../../support/infra.js';
import { chartsDir, subcharts } from './values-schema.js';

const run = promisify(execFile);

/** A rendered Kubernetes object, loosely typed: the tests read fields by path. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [field: string]: unknown;
}

export interface HelmResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface Charts {
  /** The umbrella chart's directory in the copy. */
  umbrella: string;
  /** A subchart's directory in the copy. */
  subchart(name: string): string;
  helm(args: readonly string[]): Promise<HelmResult>;
  /** `helm template` of the umbrella (or a chart directory) with values files and --set pairs; throws with helm's stderr when it fails. */
  render(options?: { chart?: string; values?: readonly string[]; set?: readonly string[]; release?: string; namespace?: string }): Promise<K8sObject[]>;
  close(): void;
}

function helmBin(): string {
  try {
    return infra('HELM_BIN');
  } catch {
    return join(chartsDir, '../../.cache/bin/helm');
  }
}

/** Splits helm's multi-document output into objects (empty documents dropped). */
export function parseManifests(text: string): K8sObject[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`rendered YAML does not parse: ${doc.errors[0]!.message}`);
      return doc.toJS() as K8sObject | null;
    })
    .filter((object): object is K8sObject => object !== null && typeof object === 'object');
}

/**
 * A private copy of charts/subscription-platform with every dependency built
 * (`helm dependency build`: the subcharts' file://../platform-lib, the umbrella's unpacked
 * subcharts), and helm's home in the same temporary folder: nothing is written to the
 * repository, and suites running side by side do not share state.
 */
export async function prepareCharts(): Promise<Charts> {
  const root = mkdtempSync(join(tmpdir(), 'sp-charts-'));
  const umbrella = join(root, 'subscription-platform');
  cpSync(chartsDir, umbrella, { recursive: true, filter: (source) => !/\/charts\/[^/]+\/charts\/[^/]+\.tgz$/.test(source) });
  const env = {
    ...process.env,
    HELM_CACHE_HOME: join(root, '.helm/cache'),
    HELM_CONFIG_HOME: join(root, '.helm/config'),
    HELM_DATA_HOME: join(root, '.helm/data'),
  };
  const helm = async (args: readonly string[]): Promise<HelmResult> => {
    try {
      const { stdout, stderr } = await run(helmBin(), [...args], { env, maxBuffer: 64 * 1024 * 1024 });
      return { code: 0, stdout, stderr };
    } catch (err) {
      const failure = err as { code?: number; stdout?: string; stderr?: string };
      return { code: typeof failure.code === 'number' ? failure.code : 1, stdout: failure.stdout ?? '', stderr: failure.stderr ?? String(err) };
    }
  };
  const subchart = (name: string): string => join(umbrella, 'charts', name);
  for (const name of subcharts) {
    const result = await helm(['dependency', 'build', subchart(name)]);
    if (result.code !== 0) throw new Error(`helm dependency build ${name} failed: ${result.stderr}`);
  }
  const built = await helm(['dependency', 'build', umbrella]);
  if (built.code !== 0) throw new Error(`helm dependency build subscription-platform failed: ${built.stderr}`);
  return {
    umbrella,
    subchart,
    helm,
    async render(options = {}) {
      const args = ['template', options.release ?? 'sp', options.chart ?? umbrella, '--namespace', options.namespace ?? 'platform'];
      for (const file of options.values ?? []) args.push('-f', file);
      for (const pair of options.set ?? []) args.push('--set', pair);
      const result = await helm(args);
      if (result.code !== 0) throw new Error(result.stderr);
      return parseManifests(result.stdout);
    },
    close: () => rmSync(root, { recursive: true, force: true }),
  };
}

/** The ci/*-values.yaml scenarios of a chart directory, by file name. */
export function scenarios(chartDir: string): string[] {
  const dir = join(chartDir, 'ci');
  return existsSync(dir) ? readdirSync(dir).filter((file) => file.endsWith('-values.yaml')).sort() : [];
}
