import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger, Registry } from '@sp/observability';
import type { ReadinessCheck, ServedApi } from '@sp/http';
import { createClaimIndex } from './reconcile/claim-index.js';
import { createClaimMemory } from './reconcile/claim-memory.js';
import type { GraphControllerConfig } from './config.js';
import { createControllerAdapters, type ControllerAdapters } from './controller-adapters.js';
import { createControlLoop } from './control-loop.js';
import { createControllerMetrics } from './controller-metrics.js';
import { createSdlReader, DEFAULT_SDL_READER } from './federation/subgraph-sdl-reader.js';
import { createSubgraphSync } from './federation/subgraph-sync.js';
import { loadKubeConfig, PooledKubeConfig } from './kube/kube-client.js';
import { createBackgroundEvents } from './kube/kube-event-recorder.js';
import { createLeaderElector } from './kube/leader-elector.js';
import { createRegistryView } from './registry/registry-view.js';
import { createServiceInformer } from './informer/service-informer.js';

export interface GraphControllerRuntime {
  logger: Logger;
  /** The metrics registry (prom-client), as in every service. */
  registry: Registry;
  /** The wall clock, Unix ms, of what the controller dates (claims seen, Events, the Lease's times): main.ts gives Date.now. */
  now: () => number;
}

/** What a test brings itself instead of what the configuration names; the test closes what it brought. */
export interface GraphControllerOverrides extends Partial<ControllerAdapters> {
  /** The cluster (default: loaded from `config.kubeSource`, KUBECONFIG or the pod's service account). */
  kubeConfig?: KubeConfig;
  /** Bound for one Kubernetes API request (lists). */
  kubeTimeoutMs?: number;
  /**
   * Service keys reconciled at the same time (one of them is kept for changes while a resync runs).
   * More than the registry's 8 connections, so those stay busy while reconciles wait on other things.
   */
  workers?: number;
  /** Passed to the watches (tests shorten it). */
  serverTimeoutSeconds?: () => number;
}

export interface GraphController {
  /**
   * The controller's work as the platform serves it (main.ts: serveService): no listener;
   * draining stops the reconciles and hands the Lease back, so another replica takes over at once.
   */
  api: ServedApi<undefined>;
  /** /readyz: the informers have listed, and the leader election reaches its Lease (whether this replica leads or not). */
  readiness: ReadinessCheck[];
  /** Stops the watches (shutdown, once drained). */
  close(): Promise<void>;
}

/** The service and what tests drive it by, besides serveService: start and stop, leadership, the queue. */
export interface GraphControllerParts extends GraphController {
  start(): void;
  /**
   * Stops: no new reconciles, the ones in progress finish, leadership ends and — with
   * `releaseLease` — the lease is handed back; then the watches stop.
   */
  stop(options: { releaseLease: boolean }): Promise<void>;
  isLeader(): boolean;
  /** Resolves when no key is queued, in progress or waiting for a retry. */
  idle(): Promise<void>;
}

/**
 * The graph controller's composition root, used by main.ts: the adapters the configuration names
 * (or a test brings), the informers, the leader election, the claim index and memory, the registry
 * view and the subgraph sync, handed to the control loop (control-loop.ts), which does the work.
 * Throws a ConfigError when the kubeconfig cannot be loaded.
 */
export function createGraphController(config: GraphControllerConfig, runtime: GraphControllerRuntime, overrides: GraphControllerOverrides = {}): GraphController {
  const parts = wireGraphController(config, runtime, overrides);
  return { api: parts.api, readiness: parts.readiness, close: () => parts.close() };
}

/** What createGraphController does, keeping what tests drive it by: the tests build the controller through it. */
export function wireGraphController(config: GraphControllerConfig, runtime: GraphControllerRuntime, overrides: GraphControllerOverrides = {}): GraphControllerParts {
  const { logger } = runtime;
  const given = overrides.kubeConfig ?? loadKubeConfig(config.kubeSource);
  // Every request of this controller through one connection pool (see PooledKubeConfig).
  const kubeConfig = given instanceof PooledKubeConfig ? given : new PooledKubeConfig(given);
  const adapters = createControllerAdapters(config, kubeConfig, runtime, overrides);
  const claims = createClaimIndex(config.clusterDomain);
  const memory = createClaimMemory(runtime.now);
  const view = createRegistryView(adapters.graphRegistry);
  const events = createBackgroundEvents(adapters.events, { maxQueued: 1000, concurrency: 2, logger });
  const metrics = createControllerMetrics(runtime.registry);

  const informer = createServiceInformer({
    kubeConfig,
    namespaces: config.namespaces,
    watchIdleMs: config.watchIdleMs,
    listTimeoutMs: overrides.kubeTimeoutMs ?? 30_000,
    backoff: config.backoff,
    logger,
    serverTimeoutSeconds: overrides.serverTimeoutSeconds,
    onRestart: (reason) => metrics.watchRestarted(reason),
  });
  const { leaderElection: election } = config;
  const elector = createLeaderElector({
    lock: adapters.leaseLock,
    identity: election.identity,
    leaseDurationMs: election.leaseDurationMs,
    renewDeadlineMs: election.renewDeadlineMs,
    retryPeriodMs: election.retryPeriodMs,
    logger,
    wallClock: runtime.now,
  });
  const subgraphs = createSubgraphSync({
    readSdl: createSdlReader({ ...DEFAULT_SDL_READER, timeoutMs: config.subgraphs.timeoutMs, maxBytes: config.subgraphs.maxBytes }),
    graphRegistry: adapters.graphRegistry,
    events,
    logger,
    onResult: (result) => metrics.subgraphSynced(result),
  });
  const loop = createControlLoop({
    config,
    informer,
    elector,
    claims,
    memory,
    view,
    events,
    subgraphs,
    graphRegistry: adapters.graphRegistry,
    ownership: adapters.ownership,
    metrics,
    registry: runtime.registry,
    logger,
    now: runtime.now,
    workers: overrides.workers ?? 16,
  });
  const close = (): Promise<void> => informer.stop();

  return {
    api: {
      start: () => {
        loop.start();
        return Promise.resolve(undefined);
      },
      drain: () => loop.drain(true),
    },
    close,
    start: () => loop.start(),
    async stop({ releaseLease }) {
      await loop.drain(releaseLease);
      await close();
    },
    readiness: loop.readiness,
    isLeader: () => loop.isLeader(),
    idle: () => loop.idle(),
  };
}
