import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger, Registry } from '@sp/platform';
import type { GraphControllerConfig } from './config.js';
import { createGraphController, type GraphController } from './graph-controller.js';
import { createGraphRegistryClient } from './graph-registry-client.js';
import { createKubeEventRecorder } from './kube-event-recorder.js';
import { createKubeLeaseLock } from './lease-lock.js';
import { createConfigMapOwnership } from './ownership-records.js';

export const COMPONENT = 'graph-controller';

export interface GraphControllerDeps {
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics: Registry;
}

/** The ConfigMap of the ownership records, beside the Lease (the RBAC names both). */
export const ownershipConfigMapName = (leaseName: string): string => `${leaseName}-registrations`;

/** Wires configuration to the adapters (registry HTTP client, Kubernetes Events and Lease) and the controller. */
export function createGraphControllerApp(config: GraphControllerConfig, deps: GraphControllerDeps): GraphController {
  const { leaderElection: election } = config;
  // A lease call that hangs must not outlast the time the leader may go without renewing.
  const leaseTimeoutMs = Math.max(1000, Math.floor(election.renewDeadlineMs / 2));
  return createGraphController({
    kubeConfig: deps.kubeConfig,
    registry: createGraphRegistryClient({ baseUrl: config.registry.url, apiKey: config.registry.apiKey, timeoutMs: config.registry.timeoutMs }),
    events: createKubeEventRecorder({
      api: deps.kubeConfig.makeApiClient(CoreV1Api),
      component: COMPONENT,
      instance: election.identity,
      timeoutMs: 10_000,
      logger: deps.logger,
    }),
    leaseLock: createKubeLeaseLock({
      api: deps.kubeConfig.makeApiClient(CoordinationV1Api),
      namespace: election.leaseNamespace,
      name: election.leaseName,
      timeoutMs: leaseTimeoutMs,
    }),
    ownership: createConfigMapOwnership({
      api: deps.kubeConfig.makeApiClient(CoreV1Api),
      namespace: election.leaseNamespace,
      name: ownershipConfigMapName(election.leaseName),
      timeoutMs: 10_000,
    }),
    leaderElection: election,
    namespaces: config.namespaces,
    clusterDomain: config.clusterDomain,
    resyncMs: config.resyncMs,
    watchIdleMs: config.watchIdleMs,
    backoff: config.backoff,
    logger: deps.logger,
    metrics: deps.metrics,
  });
}
