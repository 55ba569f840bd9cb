import { existsSync, readFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import { env, operationsEnv, parseEnv, type Env } from '@sp/core';

/** Where the in-cluster service account mounts its namespace. */
/** The controller's name in its logs, metrics and the Events it records. */
export const COMPONENT = 'graph-controller';

export const SERVICE_ACCOUNT_NAMESPACE_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';

export interface LeaderElectionConfig {
  leaseName: string;
  leaseNamespace: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  /** Who holds the lease: the pod name, or the host name with a random suffix outside a cluster. */
  identity: string;
}

export interface GraphControllerConfig {
  registry: { url: string; apiKey: string; timeoutMs: number };
  /** Namespaces whose Services are watched; empty means all namespaces. */
  namespaces: readonly string[];
  clusterDomain: string;
  resyncMs: number;
  watchIdleMs: number;
  backoff: { baseMs: number; maxMs: number };
  leaderElection: LeaderElectionConfig;
  /** Federated Services: how their subgraph schema is read, and how often it is read again. */
  subgraphs: { pollMs: number; timeoutMs: number; maxBytes: number };
  /** How the Kubernetes API is reached: a kubeconfig file (KUBECONFIG, ~/.kube/config) or the pod's service account. */
  kubeSource: 'kubeconfig' | 'in-cluster';
  managementPort: number;
  logLevel: string;
  shutdownGraceMs: number;
}

/** What the configuration may look at beyond the variables: files and host facts, replaceable in tests. */
export interface ConfigHost {
  fileExists(path: string): boolean;
  readFile(path: string): string;
  hostname(): string;
  homedir(): string;
}

const nodeHost: ConfigHost = {
  fileExists: existsSync,
  readFile: (path) => readFileSync(path, 'utf8'),
  hostname,
  homedir,
};

const seconds = (fallback: number) => env.positiveInt(fallback);
/** A DNS-1123 label: namespace and lease names. */
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/;

/**
 * Every variable of the service, declared once: name, schema, default and description (`make docs`
 * writes the README's settings table from it).
 */
export const settings = {
  Registry__Url: env.url(['http', 'https']).describe('Base URL of the graph registry (http or https)'),
  Registry__ApiKey: env.string().describe('Its `X-Api-Key`'),
  Registry__TimeoutMs: env.positiveInt(5000).describe('Upper bound of one registry request'),
  Controller__Namespaces: z.string().transform((value, ctx) => {
    const names = [...new Set(value.split(',').map((item) => item.trim()).filter((item) => item !== ''))];
    for (const name of names.filter((item) => !DNS_LABEL.test(item))) ctx.addIssue({ code: 'custom', message: `"${name}" is not a namespace name` });
    return names;
  }).optional().describe('Comma-separated namespaces to watch (one informer each); unset: all namespaces'),
  Controller__ClusterDomain: z.string().regex(DNS_SUBDOMAIN, { message: 'must be a DNS name such as cluster.local' }).default('cluster.local').describe('DNS domain of the registered URLs'),
  Controller__ResyncSeconds: seconds(300).describe('Full relist and re-assertion period'),
  Controller__WatchIdleSeconds: seconds(120).describe('Watchdog: restart a watch silent this long'),
  Controller__BackoffBaseMs: env.positiveInt(200).describe('First retry delay of a key (and of informer restarts); doubles up to `Controller__BackoffMaxMs`'),
  Controller__BackoffMaxMs: env.positiveInt(30_000).describe('Longest retry delay'),
  Controller__LeaseName: z.string().regex(DNS_SUBDOMAIN, { message: 'must be a Kubernetes object name' }).default('graph-controller').describe('Lease of the leader election'),
  Controller__LeaseNamespace: z.string().regex(DNS_LABEL, { message: 'must be a namespace name' }).optional().describe('Namespace of the Lease; in a cluster the pod\'s own (the service account\'s namespace file), required elsewhere'),
  Controller__LeaseDurationSeconds: seconds(15).describe('How long a Lease holds without renewal; must exceed the renew deadline'),
  Controller__RenewDeadlineSeconds: seconds(10).describe('The leader gives up leadership when it could not renew for this long; must exceed the retry period'),
  Controller__RetryPeriodSeconds: seconds(2).describe('Between attempts to acquire or renew the Lease'),
  Controller__SubgraphPollSeconds: seconds(60).describe('How often the schema of every federated Service (`graph-registry.io/federation: "true"`) is read again with `{ _service { sdl } }`, besides on every change of the Service'),
  Controller__SubgraphTimeoutMs: env.positiveInt(5000).describe('Upper bound of one `{ _service { sdl } }` request to a subgraph (3 tries with backoff per read)'),
  Controller__SubgraphMaxBytes: env.positiveInt(1024 * 1024).describe('Largest subgraph schema answer read, in bytes (the registry accepts 1 MiB)'),
  POD_NAME: env.string().optional().describe('Identity in the Lease (set it from `metadata.name`); unset: the host name and a random suffix'),
  KUBECONFIG: env.string().optional().describe('Kubeconfig file(s), `:`-separated; unset: `~/.kube/config` outside a cluster, the service account in one'),
  KUBERNETES_SERVICE_HOST: env.string().optional().describe('Set by Kubernetes in every pod: with it (and no `KUBECONFIG`) the pod\'s service account is used'),
  ...operationsEnv,
};

function inClusterNamespace(host: ConfigHost): string | undefined {
  if (!host.fileExists(SERVICE_ACCOUNT_NAMESPACE_FILE)) return undefined;
  const namespace = host.readFile(SERVICE_ACCOUNT_NAMESPACE_FILE).trim();
  return namespace === '' ? undefined : namespace;
}

/** Leader-election and backoff timings that only make sense in one order. */
function timingChecks(input: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const number = (name: string, fallback: number): number => Number(input[name] ?? fallback);
  if (number('Controller__RenewDeadlineSeconds', 10) >= number('Controller__LeaseDurationSeconds', 15)) {
    problems.push('Controller__RenewDeadlineSeconds: must be less than Controller__LeaseDurationSeconds');
  }
  if (number('Controller__RetryPeriodSeconds', 2) >= number('Controller__RenewDeadlineSeconds', 10)) {
    problems.push('Controller__RetryPeriodSeconds: must be less than Controller__RenewDeadlineSeconds');
  }
  if (number('Controller__BackoffBaseMs', 200) > number('Controller__BackoffMaxMs', 30_000)) {
    problems.push('Controller__BackoffMaxMs: must not be less than Controller__BackoffBaseMs');
  }
  return problems;
}

/** Where the Kubernetes API and the lease's namespace come from, in a cluster or outside. */
function clusterChecks(input: Readonly<Record<string, string>>, host: ConfigHost): string[] {
  const problems: string[] = [];
  const inCluster = input.KUBERNETES_SERVICE_HOST !== undefined;
  if (input.Controller__LeaseNamespace === undefined && !(inCluster && inClusterNamespace(host))) {
    problems.push('Controller__LeaseNamespace: is required outside a cluster (no service account namespace file)');
  }
  if (input.KUBECONFIG !== undefined) {
    const missing = input.KUBECONFIG.split(':').filter((path) => path !== '' && !host.fileExists(path));
    if (missing.length > 0) problems.push(`KUBECONFIG: file not found: ${missing.join(', ')}`);
  } else if (!inCluster && !host.fileExists(join(host.homedir(), '.kube', 'config'))) {
    problems.push('KUBECONFIG: is required outside a cluster (no in-cluster service account and no ~/.kube/config)');
  }
  return problems;
}

/**
 * The only reader of the environment. Every variable is validated at start and every problem is
 * reported at once, by variable name.
 */
export function loadConfig(environment: Env = process.env, host: ConfigHost = nodeHost): GraphControllerConfig {
  const vars = parseEnv(settings, environment, (input) => [...timingChecks(input), ...clusterChecks(input, host)]);
  const inCluster = vars.KUBERNETES_SERVICE_HOST !== undefined && vars.KUBECONFIG === undefined;
  return {
    registry: { url: vars.Registry__Url.replace(/\/+$/, ''), apiKey: vars.Registry__ApiKey, timeoutMs: vars.Registry__TimeoutMs },
    namespaces: vars.Controller__Namespaces ?? [],
    clusterDomain: vars.Controller__ClusterDomain,
    resyncMs: vars.Controller__ResyncSeconds * 1000,
    watchIdleMs: vars.Controller__WatchIdleSeconds * 1000,
    backoff: { baseMs: vars.Controller__BackoffBaseMs, maxMs: vars.Controller__BackoffMaxMs },
    leaderElection: {
      leaseName: vars.Controller__LeaseName,
      leaseNamespace: vars.Controller__LeaseNamespace ?? inClusterNamespace(host)!,
      leaseDurationMs: vars.Controller__LeaseDurationSeconds * 1000,
      renewDeadlineMs: vars.Controller__RenewDeadlineSeconds * 1000,
      retryPeriodMs: vars.Controller__RetryPeriodSeconds * 1000,
      // A pod name is unique while the pod lives, and a restarted container of the same pod may
      // take its lease back at once; elsewhere two processes may share a host name.
      identity: vars.POD_NAME ?? `${host.hostname()}_${randomUUID().slice(0, 8)}`,
    },
    subgraphs: { pollMs: vars.Controller__SubgraphPollSeconds * 1000, timeoutMs: vars.Controller__SubgraphTimeoutMs, maxBytes: vars.Controller__SubgraphMaxBytes },
    kubeSource: inCluster ? 'in-cluster' : 'kubeconfig',
    managementPort: vars.Management__Port,
    logLevel: vars.Log__Level,
    shutdownGraceMs: vars.Shutdown__GracePeriodMs,
  };
}
