import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import type { Logger, ReadinessCheck, Registry } from '@sp/platform';
import { createClaimIndex } from './claim-index.js';
import { createClaimMemory } from './claim-memory.js';
import type { GraphControllerConfig } from './config.js';
import { createControllerMetrics } from './controller-metrics.js';
import { compareClaims, serviceKey, type GraphClaim } from './desired-state.js';
import { createGraphRegistryClient, type GraphRegistry } from './graph-registry-client.js';
import { PooledKubeConfig } from './kube-client.js';
import { createBackgroundEvents, createKubeEventRecorder, type EventRecorder } from './kube-event-recorder.js';
import { createLeaderElector } from './leader-elector.js';
import { createKubeLeaseLock, type LeaseLock } from './lease-lock.js';
import { createConfigMapOwnership, type OwnedName, type OwnershipRecords } from './ownership-records.js';
import { createReconciler, NotLeaderError } from './reconciler.js';
import { createRegistryView } from './registry-view.js';
import { createServiceInformer, type ServiceChange } from './service-informer.js';
import { createWorkQueue, type Priority } from './work-queue.js';

export const COMPONENT = 'graph-controller';

/** What the controller runs with; the adapters default to the real ones built from `kubeConfig` and the configuration. */
export interface GraphControllerDeps {
  kubeConfig: KubeConfig;
  logger: Logger;
  metrics: Registry;
  registry?: GraphRegistry;
  events?: EventRecorder;
  leaseLock?: LeaseLock;
  /** Which names this controller registered, kept in the cluster across restarts. */
  ownership?: OwnershipRecords;
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

type Adapters = Required<Pick<GraphControllerDeps, 'registry' | 'events' | 'leaseLock' | 'ownership'>>;

/** The registry HTTP client, Kubernetes Events, the Lease and the ownership records, unless given. */
function adaptersOf(config: GraphControllerConfig, deps: GraphControllerDeps, kubeConfig: KubeConfig): Adapters {
  const { leaderElection: election } = config;
  const core = kubeConfig.makeApiClient(CoreV1Api);
  return {
    registry: deps.registry ?? createGraphRegistryClient({ baseUrl: config.registry.url, apiKey: config.registry.apiKey, timeoutMs: config.registry.timeoutMs }),
    events:
      deps.events ??
      createBackgroundEvents(createKubeEventRecorder({ api: core, component: COMPONENT, instance: election.identity, timeoutMs: 10_000, logger: deps.logger }), {
        maxQueued: 1000,
        concurrency: 2,
        logger: deps.logger,
      }),
    leaseLock:
      deps.leaseLock ??
      createKubeLeaseLock({
        api: kubeConfig.makeApiClient(CoordinationV1Api),
        namespace: election.leaseNamespace,
        name: election.leaseName,
        // A lease call that hangs must not outlast the time the leader may go without renewing.
        timeoutMs: Math.max(1000, Math.floor(election.renewDeadlineMs / 2)),
      }),
    ownership:
      deps.ownership ??
      createConfigMapOwnership({ api: core, kubeConfig, namespace: election.leaseNamespace, prefix: election.leaseName, timeoutMs: 10_000, logger: deps.logger }),
  };
}

export interface GraphController {
  start(): void;
  /**
   * Stops: no new reconciles, the ones in progress finish, leadership ends and — with
   * `releaseLease` — the lease is handed back so another replica takes over at once.
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
 * as background work that only re-checks.
 */
export function createGraphController(config: GraphControllerConfig, deps: GraphControllerDeps): GraphController {
  const { logger } = deps;
  // Every request of this controller through one connection pool (see PooledKubeConfig).
  const kubeConfig = deps.kubeConfig instanceof PooledKubeConfig ? deps.kubeConfig : new PooledKubeConfig(deps.kubeConfig);
  const adapters = adaptersOf(config, deps, kubeConfig);
  const claims = createClaimIndex(config.clusterDomain);
  const memory = createClaimMemory();
  const view = createRegistryView(adapters.registry);
  let term: AbortController | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;
  /** The ownership records joined the memory in this leadership term. */
  let recordsAdopted = false;
  let informersSynced = false;

  const informer = createServiceInformer({
    kubeConfig,
    namespaces: config.namespaces,
    watchIdleMs: config.watchIdleMs,
    listTimeoutMs: deps.kubeTimeoutMs ?? 30_000,
    backoff: config.backoff,
    logger,
    serverTimeoutSeconds: deps.serverTimeoutSeconds,
    onChange: (change, service) => observe(change, service),
    onRestart: (reason) => metrics.watchRestarted(reason),
    onSynced: () => {
      logger.info({ namespaces: config.namespaces.length > 0 ? config.namespaces : 'all' }, 'informers synced');
      informersSynced = true;
      queue.start();
      if (elector.isLeader() && recordsAdopted) void recordWinners(); // else the leader's adoption does it next
    },
  });

  function observe(change: ServiceChange, service: V1Service): void {
    const key = serviceKey(service);
    if (change === 'delete') claims.delete(key);
    else {
      const claim = claims.set(service);
      if (claim) memory.observe(claim);
    }
    if (claims.parsed(key).kind !== 'none' || reconciler.isTracking(key)) queue.add(key, 'change');
    logger.debug({ change, service: key }, 'service changed');
  }

  const elector = createLeaderElector({
    lock: adapters.leaseLock,
    identity: config.leaderElection.identity,
    leaseDurationMs: config.leaderElection.leaseDurationMs,
    renewDeadlineMs: config.leaderElection.renewDeadlineMs,
    retryPeriodMs: config.leaderElection.retryPeriodMs,
    logger,
    onStartedLeading: () => {
      term = new AbortController();
      recordsAdopted = false;
      metrics.setLeader(true);
      void recheckAll();
    },
    onStoppedLeading: () => {
      term?.abort();
      view.clear();
      metrics.setLeader(false);
    },
  });

  const reconciler = createReconciler({
    claims,
    getService: (key) => informer.get(...splitKey(key)),
    registry: adapters.registry,
    view,
    events: adapters.events,
    memory,
    ownership: adapters.ownership,
    writeSignal: () => (elector.isLeader() ? term?.signal : undefined),
    logger,
  });

  const queue = createWorkQueue({
    concurrency: deps.workers ?? 16,
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

  const metrics = createControllerMetrics(deps.metrics, { queueDepth: () => queue.depth(), registeredNames: () => reconciler.registeredNames() });

  /**
   * What the ownership records say this controller registered joins the claim memory, so the
   * names of Services deleted while no replica ran are reconciled (and deleted) too. Read once
   * per leadership term (again at the next resync if that failed): only the leader writes them.
   */
  async function adoptRecords(): Promise<void> {
    if (recordsAdopted) return;
    try {
      for (const [name, owned] of await adapters.ownership.load()) memory.observe({ name, key: owned.service, url: owned.url, createdAt: Number.POSITIVE_INFINITY });
      recordsAdopted = true;
    } catch (err) {
      logger.warn({ err, records: adapters.ownership.description }, 'could not read the ownership records: trying again at the next resync');
    }
  }

  /**
   * The winner of every claimed name recorded at once, one write per shard, before the reconciles
   * get to them: what each reconcile would record before its registry write, so they find their
   * record written (a start of 10,000 names costs 64 writes, not 10,000). Needs every Service
   * listed, and the records read in this term (so it writes over what it read, not over an
   * adoption's list still under way); a failure leaves the records to the reconciles, one batch at
   * a time.
   */
  async function recordWinners(): Promise<void> {
    const winners = new Map<string, GraphClaim>();
    for (const claim of claims.claims()) {
      const other = winners.get(claim.name);
      if (!other || compareClaims(claim, other) < 0) winners.set(claim.name, claim);
    }
    const records = [...winners].map(([name, claim]): [string, OwnedName] => [name, { service: claim.key, url: claim.url }]);
    try {
      if (elector.isLeader()) await adapters.ownership.ownAll(records);
    } catch (err) {
      logger.warn({ err, records: adapters.ownership.description }, 'could not record the names at once: each reconcile records its own');
    }
  }

  /** The leader re-checks every key in the background: the records adopted and the registry read (one request) first. */
  async function recheckAll(): Promise<void> {
    await adoptRecords();
    if (informersSynced && recordsAdopted) void recordWinners();
    try {
      await view.refresh(term?.signal);
    } catch (err) {
      logger.warn({ err }, 'could not read the registry: this resync reads it name by name');
    }
    if (!elector.isLeader()) return;
    for (const key of [...memory.keys(), ...claims.annotatedKeys()]) queue.add(key, 'resync');
  }

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

  return {
    start() {
      informer.start();
      elector.start();
      resyncTimer = setInterval(resync, config.resyncMs);
      resyncTimer.unref();
    },
    async stop({ releaseLease }) {
      clearInterval(resyncTimer);
      await queue.stop();
      await elector.stop({ release: releaseLease });
      await informer.stop();
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
