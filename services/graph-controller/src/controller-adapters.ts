import { CoordinationV1Api, CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { Logger } from '@sp/observability';
import { COMPONENT, type GraphControllerConfig } from './config.js';
import { createGraphRegistryClient, type GraphRegistryClient } from './registry/graph-registry-client.js';
import { createKubeEventRecorder, type EventRecorder } from './kube/kube-event-recorder.js';
import { createKubeLeaseLock, type LeaseLock } from './kube/lease-lock.js';
import { createConfigMapOwnership, type OwnershipRecords } from './ownership/ownership-records.js';

/** What the controller talks to besides the Services it watches. */
export interface ControllerAdapters {
  /** The graph registry's HTTP API. */
  graphRegistry: GraphRegistryClient;
  /** Kubernetes Events on the Services. */
  events: EventRecorder;
  /** The coordination.k8s.io Lease of the leader election. */
  leaseLock: LeaseLock;
  /** Which names this controller registered, kept in the cluster across restarts. */
  ownership: OwnershipRecords;
}

/** The adapters the configuration names, on `kubeConfig`, except those a test brings (`given`). */
export function createControllerAdapters(config: GraphControllerConfig, kubeConfig: KubeConfig, runtime: { logger: Logger; now: () => number }, given: Partial<ControllerAdapters>): ControllerAdapters {
  const { logger, now } = runtime;
  const { leaderElection: election } = config;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return {
    graphRegistry: given.graphRegistry ?? createGraphRegistryClient({ baseUrl: config.registry.url, apiKey: config.registry.apiKey, timeoutMs: config.registry.timeoutMs }),
    events: given.events ?? createKubeEventRecorder({ api: core, component: COMPONENT, instance: election.identity, timeoutMs: 10_000, logger, now }),
    leaseLock:
      given.leaseLock ??
      createKubeLeaseLock({
        api: kubeConfig.makeApiClient(CoordinationV1Api),
        namespace: election.leaseNamespace,
        name: election.leaseName,
        // A lease call that hangs must not outlast the time the leader may go without renewing.
        timeoutMs: Math.max(1000, Math.floor(election.renewDeadlineMs / 2)),
      }),
    ownership: given.ownership ?? createConfigMapOwnership({ api: core, kubeConfig, namespace: election.leaseNamespace, prefix: election.leaseName, timeoutMs: 10_000, logger }),
  };
}
