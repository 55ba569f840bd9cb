import { CoordinationV1Api, CoreV1Api, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import type { Logger, ReadinessCheck, Registry } from '@sp/platform';
import { hasGraphAnnotation } from './annotations.js';
import { createClaimMemory } from './claim-memory.js';
import type { GraphControllerConfig } from './config.js';
import { createControllerMetrics } from './controller-metrics.js';
import { claimOf, serviceKey } from './desired-state.js';
import { createGraphRegistryClient, type GraphRegistry } from './graph-registry-client.js';
import { createKubeEventRecorder, type EventRecorder } from './kube-event-recorder.js';
import { createLeaderElector } from './leader-elector.js';
import { createKubeLeaseLock, type LeaseLock } from './lease-lock.js';
import { createConfigMapOwnership, type OwnershipRecords } from './ownership-records.js';
import { createReconciler, NotLeaderError } from './reconciler.js';
import { createServiceInformer, type ServiceChange } from './service-informer.js';
import { createWorkQueue } from './work-queue.js';

export const COMPONENT = 'graph-controller';

/** The ConfigMap of the ownership records, beside the Lease (the RBAC names both). */
export const ownershipConfigMapName = (leaseName: string): string => `${leaseName}-registrations`;

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
  /** Service keys reconciled at the same time. */
  workers?: number;
  /** Passed to the watches (tests shorten it). */
  serverTimeoutSeconds?: () => number;
}

type Adapters = Required<Pick<GraphControllerDeps, 'registry' | 'events' | 'leaseLock' | 'ownership'>>;

/** The registry HTTP client, Kubernetes Events, the Lease and the ownership records, unless given. */
function adaptersOf(config: GraphControllerConfig, deps: GraphControllerDeps): Adapters {
  const { leaderElection: election } = config;
  const core = deps.kubeConfig.makeApiClient(CoreV1Api);
  return {
    registry: deps.registry ?? createGraphRegistryClient({ baseUrl: config.registry.url, apiKey: config.registry.apiKey, timeoutMs: config.registry.timeoutMs }),
    events: deps.events ?? createKubeEventRecorder({ api: core, component: COMPONENT, instance: election.identity, timeoutMs: 10_000, logger: deps.logger }),
    leaseLock:
      deps.leaseLock ??
      createKubeLeaseLock({
        api: deps.kubeConfig.makeApiClient(CoordinationV1Api),
        namespace: election.leaseNamespace,
        name: election.leaseName,
        // A lease call that hangs must not outlast the time the leader may go without renewing.
        timeoutMs: Math.max(1000, Math.floor(election.renewDeadlineMs / 2)),
      }),
    ownership:
      deps.ownership ?? createConfigMapOwnership({ api: core, namespace: election.leaseNamespace, name: ownershipConfigMapName(election.leaseName), timeoutMs: 10_000 }),
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
 * The graph controller's composition root, used by main.ts and the tests: Service informers feed
 * a keyed queue; the leader's workers run the idempotent reconcile; a periodic resync relists and
 * re-asserts every registration.
 */
export function createGraphController(config: GraphControllerConfig, deps: GraphControllerDeps): GraphController {
  const { logger } = deps;
  const adapters = adaptersOf(config, deps);
  const memory = createClaimMemory();
  let term: AbortController | undefined;
  let resyncTimer: NodeJS.Timeout | undefined;

  const informer = createServiceInformer({
    kubeConfig: deps.kubeConfig,
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
      queue.start();
    },
  });

  const elector = createLeaderElector({
    lock: adapters.leaseLock,
    identity: config.leaderElection.identity,
    leaseDurationMs: config.leaderElection.leaseDurationMs,
    renewDeadlineMs: config.leaderElection.renewDeadlineMs,
    retryPeriodMs: config.leaderElection.retryPeriodMs,
    logger,
    onStartedLeading: () => {
      term = new AbortController();
      metrics.setLeader(true);
      void adoptRecords().finally(enqueueAll);
    },
    onStoppedLeading: () => {
      term?.abort();
      metrics.setLeader(false);
    },
  });

  const reconciler = createReconciler({
    services: () => informer.list(),
    getService: (key) => informer.get(...splitKey(key)),
    registry: adapters.registry,
    events: adapters.events,
    memory,
    ownership: adapters.ownership,
    clusterDomain: config.clusterDomain,
    writeSignal: () => (elector.isLeader() ? term?.signal : undefined),
    logger,
  });

  const queue = createWorkQueue({
    concurrency: deps.workers ?? 4,
    backoff: config.backoff,
    process: async (key) => {
      if (!elector.isLeader()) return; // a new leader starts with every key anyway
      try {
        metrics.reconciled(await reconciler.reconcile(key));
      } catch (err) {
        if (err instanceof NotLeaderError || !elector.isLeader()) return;
        metrics.reconciled('error');
        throw err;
      }
    },
    onError: (key, err, retryInMs) => logger.warn({ err, service: key, retryInMs }, 'reconcile failed: retrying'),
  });

  const metrics = createControllerMetrics(deps.metrics, { queueDepth: () => queue.depth(), registeredNames: () => reconciler.registeredNames() });

  function observe(change: ServiceChange, service: V1Service): void {
    const key = serviceKey(service);
    const claim = claimOf(service, config.clusterDomain);
    if (claim) memory.observe(claim);
    if (hasGraphAnnotation(service) || reconciler.isTracking(key)) queue.add(key);
    logger.debug({ change, service: key }, 'service changed');
  }

  /**
   * What the ownership records say this controller registered joins the claim memory, so the
   * names of Services deleted while no replica ran are reconciled (and deleted) too.
   */
  async function adoptRecords(): Promise<void> {
    try {
      for (const [name, owned] of await adapters.ownership.load()) memory.observe({ name, key: owned.service, url: owned.url, createdAt: Number.POSITIVE_INFINITY });
    } catch (err) {
      logger.warn({ err, records: adapters.ownership.description }, 'could not read the ownership records: trying again at the next resync');
    }
  }

  function enqueueAll(): void {
    const keys = new Set(memory.keys());
    for (const service of informer.list()) if (hasGraphAnnotation(service)) keys.add(serviceKey(service));
    for (const key of keys) queue.add(key);
  }

  const resync = (): void => {
    informer.relist();
    if (elector.isLeader()) {
      void adoptRecords().finally(enqueueAll);
      return;
    }
    // A follower keeps what it saw current, and forgets what nobody has claimed for a while.
    const now = Date.now();
    for (const service of informer.list()) {
      const claim = claimOf(service, config.clusterDomain);
      if (claim) memory.observe(claim, now);
    }
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
