import type { V1Service } from '@kubernetes/client-node';
import type { Logger, Registry } from '@sp/observability';
import type { ReadinessCheck } from '@sp/http';
import type { GraphControllerConfig } from './config.js';
import { registerStateGauges, type ControllerMetrics } from './controller-metrics.js';
import type { SubgraphSync } from './federation/subgraph-sync.js';
import type { ServiceChange, ServiceInformer } from './informer/service-informer.js';
import type { BackgroundEvents } from './kube/kube-event-recorder.js';
import type { LeaderElector } from './kube/leader-elector.js';
import type { OwnershipRecords } from './ownership/ownership-records.js';
import { createOwnershipSync } from './ownership/ownership-sync.js';
import type { ClaimIndex } from './reconcile/claim-index.js';
import type { ClaimMemory } from './reconcile/claim-memory.js';
import { serviceKey } from './reconcile/desired-state.js';
import { createReconciler, NotLeaderError } from './reconcile/reconciler.js';
import { createWorkQueue, type Priority } from './reconcile/work-queue.js';
import type { GraphRegistryClient } from './registry/graph-registry-client.js';
import type { RegistryView } from './registry/registry-view.js';

/** What the control loop runs on: built by the composition root (graph-controller.ts). */
export interface ControlLoopParts {
  config: Pick<GraphControllerConfig, 'namespaces' | 'resyncMs' | 'subgraphs' | 'backoff'>;
  informer: ServiceInformer;
  elector: LeaderElector;
  claims: ClaimIndex;
  memory: ClaimMemory;
  view: RegistryView;
  events: BackgroundEvents;
  subgraphs: SubgraphSync;
  graphRegistry: GraphRegistryClient;
  ownership: OwnershipRecords;
  metrics: ControllerMetrics;
  registry: Registry;
  logger: Logger;
  /** The wall clock, Unix ms. */
  now: () => number;
  /** Service keys reconciled at the same time. */
  workers: number;
}

export interface ControlLoop {
  /** Starts the watches, the election and the periodic resyncs. */
  start(): void;
  /** No new reconciles, the ones in progress finish, leadership ends (the Lease handed back with `releaseLease`); the watches keep running. */
  drain(releaseLease: boolean): Promise<void>;
  isLeader(): boolean;
  /** Resolves when no key is queued, in progress or waiting for a retry. */
  idle(): Promise<void>;
  readiness: ReadinessCheck[];
}

const splitKey = (key: string): [string, string] => {
  const slash = key.indexOf('/');
  return [key.slice(0, slash), key.slice(slash + 1)];
};

/**
 * The controller's work, in the order a Service travels: on every informer event the claim index
 * (each Service's annotations parsed once, the claims on each name) and the claim memory follow
 * the Service, and its key is queued as a change. The leader's workers run the idempotent
 * reconcile, changes first, writing only within the current leadership term. A periodic resync
 * relists, refreshes the registry view with one `GET /`, and queues every key as background work
 * that only re-checks; a follower prunes what nobody has claimed for a while.
 */
export function createControlLoop(parts: ControlLoopParts): ControlLoop {
  const { config, informer, elector, claims, memory, view, events, subgraphs, graphRegistry, ownership, metrics, registry, logger, now, workers } = parts;
  /** The current leadership term: aborted when it ends, so the writes under way stop. */
  let term: AbortController | undefined;
  let informersSynced = false;

  const reconciler = createReconciler({
    subgraphs,
    claims,
    getService: (key) => informer.get(...splitKey(key)),
    graphRegistry,
    view,
    events,
    memory,
    ownership,
    writeSignal: () => (elector.isLeader() ? term?.signal : undefined),
    logger,
  });
  const queue = createWorkQueue({
    concurrency: workers,
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
  registerStateGauges(registry, { queueDepth: () => queue.depth(), registeredNames: () => reconciler.registeredNames(), refusedSubgraphs: () => subgraphs.refusedCount() });
  const records = createOwnershipSync({ ownership, memory, claims, isLeader: () => elector.isLeader(), logger });

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
    const at = now();
    for (const claim of claims.claims()) memory.observe(claim, at);
    memory.pruneSeenBefore(at - 3 * config.resyncMs);
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
  const drain = async (releaseLease: boolean): Promise<void> => {
    clearInterval(resyncTimer);
    clearInterval(subgraphTimer);
    await queue.stop();
    await events.stop();
    await elector.stop({ release: releaseLease });
  };

  return {
    start,
    drain,
    isLeader: () => elector.isLeader(),
    idle: () => queue.idle(),
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
  };
}
