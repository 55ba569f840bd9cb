import type { KubeConfig } from '@kubernetes/client-node';
import { Registry } from 'prom-client';
import type { Logger } from '@sp/observability';
import { wireGraphController } from '../../src/graph-controller.js';
import type { GraphControllerConfig } from '../../src/config.js';
import type { GraphControllerParts } from '../../src/graph-controller.js';
import { silentLogger } from '../../../../test/support/silent-logger.js';

export const LEASE_NAMESPACE = 'platform';

export interface ControllerFixtureOptions {
  /** How the controller reaches the API server: the real one with a ServiceAccount token, or the in-test one. */
  kubeConfig: KubeConfig;
  registryUrl: string;
  apiKey: string;
  identity?: string;
  namespaces?: string[];
  resyncMs?: number;
  watchIdleMs?: number;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Default: short (50–400 ms); the production defaults are 200–30000 ms. */
  backoff?: { baseMs: number; maxMs: number };
  leaseNamespace?: string;
  /** How federated Services' schemas are read: default every 60 s, 1 s a request, 1 MiB. */
  subgraphs?: { pollMs: number; timeoutMs: number; maxBytes: number };
  /** Default: a silent one; a test that checks what the controller says passes its own. */
  logger?: Logger;
}

export interface RunningController {
  identity: string;
  controller: GraphControllerParts;
  metrics: Registry;
  /** A sample of one of the controller's metrics (0 when absent). */
  metric(name: string, labels?: Record<string, string>): Promise<number>;
  /** Graceful stop (lease released) or, with `release: false`, a crash as far as others can tell. */
  stop(options?: { release?: boolean }): Promise<void>;
}

let counter = 0;

/** The leader election of testConfig: short timings, an identity of its own per replica. */
function leaderElectionOf(options: ControllerFixtureOptions): GraphControllerConfig['leaderElection'] {
  counter += 1;
  return {
    leaseName: 'graph-controller',
    leaseNamespace: options.leaseNamespace ?? LEASE_NAMESPACE,
    leaseDurationMs: options.leaseDurationMs ?? 2000,
    renewDeadlineMs: options.renewDeadlineMs ?? 1500,
    retryPeriodMs: options.retryPeriodMs ?? 200,
    identity: options.identity ?? `replica-${counter}`,
  };
}

/** The configuration main.ts would load, with timings short enough for tests. */
export function testConfig(options: ControllerFixtureOptions): GraphControllerConfig {
  return {
    registry: { url: options.registryUrl, apiKey: options.apiKey, timeoutMs: 1000 },
    namespaces: options.namespaces ?? [],
    clusterDomain: 'cluster.local',
    resyncMs: options.resyncMs ?? 60_000,
    watchIdleMs: options.watchIdleMs ?? 10_000,
    backoff: options.backoff ?? { baseMs: 50, maxMs: 400 },
    leaderElection: leaderElectionOf(options),
    subgraphs: options.subgraphs ?? { pollMs: 60_000, timeoutMs: 1000, maxBytes: 1024 * 1024 },
    kubeSource: 'kubeconfig',
    managementPort: 0,
    logLevel: 'silent',
    shutdownGraceMs: 5000,
  };
}

/** A controller wired as main.ts wires it (wireGraphController), against an API server and a real registry. */
export function startController(options: ControllerFixtureOptions): RunningController {
  const config = testConfig(options);
  const metrics = new Registry();
  const controller = wireGraphController(config, { logger: options.logger ?? silentLogger('graph-controller'), registry: metrics, now: Date.now }, { kubeConfig: options.kubeConfig });
  controller.start();
  let stopped: Promise<void> | undefined;
  return {
    identity: config.leaderElection.identity,
    controller,
    metrics,
    async metric(name, labels = {}) {
      const metric = metrics.getSingleMetric(name);
      if (!metric) return 0;
      const data = await metric.get();
      const sample = data.values.find((value) => Object.entries(labels).every(([label, expected]) => value.labels[label] === expected));
      return sample?.value ?? 0;
    },
    stop({ release = true } = {}) {
      stopped ??= controller.stop({ releaseLease: release });
      return stopped;
    },
  };
}
