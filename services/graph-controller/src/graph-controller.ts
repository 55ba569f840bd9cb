import type { KubeConfig, V1Service } from '@kubernetes/client-node';
import type { Logger, Registry } from '@sp/observability';
import type { ReadinessCheck, ServedApi } from '@sp/http';
import { createClaimIndex } from './reconcile/claim-index.js';
import { createClaimMemory } from './reconcile/claim-memory.js';
import type { GraphControllerConfig } from './config.js';
import { createControllerAdapters, type ControllerAdapters } from './controller-adapters.js';
import { createControllerMetrics, registerStateGauges } from './controller-metrics.js';
import { createSdlReader, DEFAULT_SDL_READER } from './federation/subgraph-sdl-reader.js';
import { createSubgraphSync } from './federation/subgraph-sync.js';
import { serviceKey } from './reconcile/desired-state.js';
import { loadKubeConfig, PooledKubeConfig } from './kube/kube-client.js';
import { createBackgroundEvents } from './kube/kube-event-recorder.js';
import { createLeaderElector } from './kube/leader-elector.js';
import { createOwnershipSync } from './ownership/ownership-sync.js';
import { createReconciler, NotLeaderError } from './reconcile/reconciler.js';
import { createRegistryView } from './registry/registry-view.js';
import { createServiceInformer, type ServiceChange } from './informer/service-informer.js';
import { createWorkQueue, type Priority } from './reconcile/work-queue.js';

export interface GraphControllerRuntime {
  logger: Logger;
  /** The metrics registry (prom-client), as in every service. */
  registry: Registry;
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
  /** Stops the watches (shutdown, once drained). */
  close(): Promise<void>;
  start(): void;
  /**
   * Stops: no new reconciles, the ones in progress finish, leadership ends and — with
   * `releaseLease` — the lease is handed back; then the watches stop.
   */
  stop(options: { releaseLease: boolean }): Promise<void>;
  /** /readyz: the informers have listed, and the leader election reaches its Lease (whether this replica leads or not). */
  readiness: ReadinessCheck[];
  isLeader(): boolean;
  /** Resolves when no key is queued, in progress or waiting for a retry. */
  idle(): Promise<void>;
}

const splitKey = (key: string): [string, string] => {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
};

/**
 * The graph controller's composition root, used by main.ts and the tests, in the order a Service
 * travels: the informers keep the Services (trimmed) and, on every event, the claim index (each
 * Service's annotations parsed once, the claims on each name) and the claim memory; the event
 * queues the key as a change. The leader's workers run the idempotent reconcile, changes first.
 * A periodic resync relists, refreshes the registry view with one `GET /`, and queues every key
 * as background work that only re-checks. Throws a ConfigError when the kubeconfig cannot be loaded.
 */
export function createGraphController(config: GraphControllerConfig, runtime: GraphControllerRuntime, overrides: GraphControllerOverrides = {}): GraphController {
  const { logger } = runtime;
  const given = overrides.kubeConfig ?? loadKubeConfig(config.kubeSource);
  // Every request of this controller through one connection pool (see PooledKubeConfig).
  const kubeConfig = given instanceof PooledKubeConfig ? given : new PooledKubeConfig(given);
  const adapters = createControllerAdapters(config, kubeConfig, logger, overrides);
  const claims = createClaimIndex(config.clusterDomain);
  const memory = createClaimMemory();
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
  });
  /** The current leadership term: aborted when it ends, so the writes under way stop. */
  let term: AbortController | undefined;
  let informersSynced = false;

  const subgraphs = createSubgraphSync({
    readSdl: createSdlReader({ ...DEFAULT_SDL_READER, timeoutMs: config.subgraphs.timeoutMs, maxBytes: config.subgraphs.maxBytes }),
    graphRegistry: adapters.graphRegistry,
    events,
    logger,
    onResult: (result) => metrics.subgraphSynced(result),
  });
  const reconciler = createReconciler({
    subgraphs,
    claims,
    getService: (key) => informer.get(...splitKey(key)),
    graphRegistry: adapters.graphRegistry,
    view,
    events,
    memory,
    ownership: adapters.ownership,
    writeSignal: () => (elector.isLeader() ? term?.signal : undefined),
    logger,
  });
  const queue = createWorkQueue({
    concurrency: overrides.workers ?? 16,
    backoff: config.backoff,
    process: async (key: string, priority: Priority) => {
      if (!elector.isLeader()) return; // a new leader re-checks every key anyway
      try {
        metrics.reconciled(await reconciler.reconcile(key, priority));
      } catch (err) {
        if (err instanceof NotLeaderError || !elector.isLeader()) return;
        metrics.reconciled('error');
        throw err;
      }
    },
    onError: (key, err, retryInMs) => logger.warn({ err, service: key, retryInMs }, 'reconcile failed: retrying'),
  });
  registerStateGauges(runtime.registry, { queueDepth: () => queue.depth(), registeredNames: () => reconciler.registeredNames(), refusedSubgraphs: () => subgraphs.refusedCount() });
  const records = createOwnershipSync({ ownership: adapters.ownership, memory, claims, isLeader: () => elector.isLeader(), logger });

  /** An informer event: the index and the memory follow the Service, and its key is queued when it matters. */
  const observe = (change: ServiceChange, service: V1Service): void => {
    const key = serviceKey(service);
    if (change === 'delete') claims.delete(key);
    else {
      const claim = claims.set(service);
      if (claim) memory.observe(claim);
    }
    if (claims.parsed(key).kind !== 'none' || reconciler.isTracking(key)) queue.add(key, 'change');
    logger.debug({ change, service: key }, 'service changed');
  };

  const onSynced = (): void => {
    logger.info({ namespaces: config.namespaces.length > 0 ? config.namespaces : 'all' }, 'informers synced');
    informersSynced = true;
    queue.start();
    if (elector.isLeader() && records.adopted()) void records.recordWinners(); // else the leader's adoption does it next
  };

  /** The leader re-checks every key in the background: the records adopted and the registry read (one request) first. */
  const recheckAll = async (): Promise<void> => {
    await records.adopt();
    if (informersSynced && records.adopted()) void records.recordWinners();
    try {
      await view.refresh(term?.signal);
    } catch (err) {
      logger.warn({ err }, 'could not read the registry: this resync reads it name by name');
    }
    if (!elector.isLeader()) return;
    for (const key of [...memory.keys(), ...claims.annotatedKeys()]) queue.add(key, 'resync');
  };

  const leadership = {
    onStartedLeading: (): void => {
      term = new AbortController();
      records.newTerm();
      metrics.setLeader(true);
      void recheckAll();
    },
    onStoppedLeading: (): void => {
      term?.abort();
      view.clear();
      metrics.setLeader(false);
    },
  };

  const resync = (): void => {
    informer.relist();
    if (elector.isLeader()) {
      void recheckAll();
      return;
    }
    // A follower keeps what it saw current, and forgets what nobody has claimed for a while.
    const now = Date.now();
    for (const claim of claims.claims()) memory.observe(claim, now);
    memory.pruneSeenBefore(now - 3 * config.resyncMs);
  };

  /** The leader reads every federated Service's schema again (a subgraph may change its schema without its Service changing). */
  const pollSubgraphs = (): void => {
    if (!elector.isLeader()) return;
    for (const claim of claims.claims()) if (claim.federated === true) queue.add(claim.key, 'resync');
  };

  let resyncTimer: NodeJS.Timeout | undefined;
  let subgraphTimer: NodeJS.Timeout | undefined;
  const start = (): void => {
    informer.start({ onChange: observe, onSynced });
    elector.start(leadership);
    resyncTimer = setInterval(resync, config.resyncMs);
    resyncTimer.unref();
    subgraphTimer = setInterval(pollSubgraphs, config.subgraphs.pollMs);
    subgraphTimer.unref();
  };
  /** No new reconciles, the ones in progress finish, leadership ends; the watches keep running. */
  const drain = async (releaseLease: boolean): Promise<void> => {
    clearInterval(resyncTimer);
    clearInterval(subgraphTimer);
    await queue.stop();
    await events.stop();
    await elector.stop({ release: releaseLease });
  };
  const close = (): Promise<void> => informer.stop();

  return {
    api: {
      start: () => {
        start();
        return Promise.resolve(undefined);
      },
      drain: () => drain(true),
    },
    close,
    start,
    async stop({ releaseLease }) {
      await drain(releaseLease);
      await close();
    },
    readiness: [
      {
        name: 'informers',
        check: () => {
          const unsynced = informer.unsynced();
          return unsynced.length === 0 ? Promise.resolve() : Promise.reject(new Error(`not synced: ${unsynced.join(', ')}`));
        },
      },
      {
        name: 'leader-election',
        check: () => {
          const problem = elector.problem();
          return problem === undefined ? Promise.resolve() : Promise.reject(new Error(problem));
        },
      },
    ],
    isLeader: () => elector.isLeader(),
    idle: () => queue.idle(),
  };
}
