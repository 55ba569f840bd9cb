import { ListWatch, VersionApi, type KubeConfig, type V1Service } from '@kubernetes/client-node';
import { backoffDelay } from '@sp/core';
import type { Logger } from '@sp/observability';
import { firstMissed } from './cache-check.js';
import { serviceKey } from '../reconcile/desired-state.js';
import { apiStatus, withTimeout } from '../kube/kube-client.js';
import { listPaged } from '../kube/kube-request.js';
import { projectService } from './service-projection.js';
import { WatchdogWatch } from './watchdog-watch.js';

/** Services per list request: a relist of a large cluster arrives in pages, never whole. */
const LIST_PAGE = 500;

export type ServiceChange = 'add' | 'update' | 'delete';

export interface ServiceInformerOptions {
  kubeConfig: KubeConfig;
  /** Namespaces to watch, one informer each; empty: one informer over all namespaces. */
  namespaces: readonly string[];
  watchIdleMs: number;
  /** Bound for one list request (one page). */
  listTimeoutMs: number;
  /** Restarts after an error back off from `baseMs`, doubling, up to `maxMs`. */
  backoff: { baseMs: number; maxMs: number };
  logger: Logger;
  /** A watch was restarted: `idle` by the watchdog, `error` after it failed. */
  onRestart?(reason: 'idle' | 'error'): void;
  serverTimeoutSeconds?: () => number;
}

/** What the informer tells as it runs; given to `start`, so the reader of the events can be built after the informer. */
export interface ServiceHandlers {
  onChange(change: ServiceChange, service: V1Service): void;
  /** Every informer has listed once: the cache is complete. */
  onSynced?(): void;
}

export interface ServiceInformer {
  start(handlers: ServiceHandlers): void;
  stop(): Promise<void>;
  /** Namespaces (or `*`) whose first list has not completed yet. */
  unsynced(): string[];
  /** A Service as the informer keeps it (projected: see projectService). */
  get(namespace: string, name: string): V1Service | undefined;
  /**
   * A full list of every namespace, compared with the cache while the watches stay open; only
   * when the watch missed something does the informer list again and replace its cache (so
   * changes keep flowing during a resync of a healthy cluster).
   */
  relist(): void;
}

interface Member {
  scope: string;
  informer: ListWatch<V1Service>;
  watch: WatchdogWatch;
  synced: boolean;
  failures: number;
  /** Restarted after a failure and not watching since: the next watch is logged (how soon a restart caught up). */
  recovering: boolean;
  restartTimer: NodeJS.Timeout | undefined;
  probing: boolean;
  /** Keys an event named since the running check began its list; undefined when none runs. */
  touched: Set<string> | undefined;
}

/**
 * Services, trimmed on arrival to what the controller reads (projectService), through the library's informer (ListWatch: list, then watch from the list's
 * resourceVersion, relist on 410 Gone), one per namespace or one cluster-wide, with a watchdog on
 * every watch and a supervisor that restarts an informer after a failed list or a broken watch
 * (the library only reports those) with capped exponential backoff.
 */
const pathOf = (scope: string): string => (scope === '*' ? '/api/v1/services' : `/api/v1/namespaces/${encodeURIComponent(scope)}/services`);

export function createServiceInformer(options: ServiceInformerOptions): ServiceInformer {
  const version = options.kubeConfig.makeApiClient(VersionApi);
  const probeMs = Math.min(1000, Math.max(100, options.backoff.baseMs));
  const scopes = options.namespaces.length > 0 ? [...options.namespaces] : ['*'];
  let stopped = true;
  let handlers: ServiceHandlers | undefined;
  let syncReported = false;

  const member = (scope: string): Member => {
    const path = pathOf(scope);
    const list = () => listPaged(options.kubeConfig, path, { pageSize: LIST_PAGE, timeoutMs: options.listTimeoutMs, keep: projectService });
    const self = {} as Member;
    const watch = new WatchdogWatch(options.kubeConfig, {
      idleMs: options.watchIdleMs,
      serverTimeoutSeconds: options.serverTimeoutSeconds,
      transform: (object) => projectService(object as V1Service),
      onIdleRestart: () => {
        options.logger.warn({ scope, idleMs: options.watchIdleMs }, 'watch silent for too long: restarting it');
        options.onRestart?.('idle');
      },
      onWatching: () => {
        if (self.recovering) options.logger.info({ scope }, 'informer listed and watching again after a failure');
        self.recovering = false;
        self.synced = true;
        self.failures = 0;
        if (!syncReported && members.every((target) => target.synced)) {
          syncReported = true;
          handlers?.onSynced?.();
        }
      },
    });
    const informer = new ListWatch<V1Service>(path, watch, list, false);
    for (const change of ['add', 'update', 'delete'] as const) {
      informer.on(change, (service) => {
        self.touched?.add(serviceKey(service));
        handlers?.onChange(change, service);
      });
    }
    informer.on('error', (err: unknown) => restartLater(self, err));
    return Object.assign(self, { scope, informer, watch, synced: false, failures: 0, recovering: false, restartTimer: undefined, probing: false, touched: undefined });
  };

  function restartLater(target: Member, err: unknown): void {
    if (stopped) return;
    target.failures += 1;
    target.recovering = true;
    const delay = backoffDelay(target.failures, options.backoff.baseMs, options.backoff.maxMs);
    options.logger.warn({ err, scope: target.scope, retryInMs: delay }, 'informer failed: restarting it');
    options.onRestart?.('error');
    clearTimeout(target.restartTimer);
    target.restartTimer = setTimeout(() => startMember(target), delay);
    target.restartTimer.unref();
    // No answer at all (connection refused or cut): the server is down, and the backoff grows
    // for as long as it is. Catch up as soon as it is back rather than sleep out the delay.
    if (apiStatus(err) === undefined) probeUntilAnswered(target);
  }

  /** Polls `GET /version` (open to every client) until the server answers, then restarts the informer at once. */
  function probeUntilAnswered(target: Member): void {
    if (target.probing) return;
    target.probing = true;
    const probe = async (): Promise<void> => {
      if (stopped || target.restartTimer === undefined) {
        target.probing = false;
        return;
      }
      try {
        await version.getCode(withTimeout(probeMs));
      } catch (err) {
        if (apiStatus(err) === undefined) {
          setTimeout(() => void probe(), probeMs).unref();
          return;
        }
      }
      target.probing = false;
      if (stopped || target.restartTimer === undefined) return;
      options.logger.info({ scope: target.scope }, 'API server answers again: restarting the informer now');
      target.failures = 0;
      startMember(target);
    };
    setTimeout(() => void probe(), probeMs).unref();
  }

  /** start() rejects only when a request cannot even be built (e.g. credentials unreadable): retried like any failure. */
  function startMember(target: Member): void {
    clearTimeout(target.restartTimer);
    target.restartTimer = undefined;
    target.informer.start().catch((err: unknown) => restartLater(target, err));
  }

  /** Lists the scope and compares; relists through the informer only when the watch missed something. */
  async function check(target: Member): Promise<void> {
    if (target.touched || !target.synced) return; // a check or a first list is under way
    target.touched = new Set();
    try {
      const listed = new Map<string, string | undefined>();
      await listPaged(options.kubeConfig, pathOf(target.scope), {
        pageSize: LIST_PAGE,
        timeoutMs: options.listTimeoutMs,
        keep: (service: V1Service) => void listed.set(serviceKey(service), service.metadata?.resourceVersion),
      });
      const cached = target.informer.list();
      const missed = firstMissed(listed, cached, target.touched, (key) => target.informer.get(key.slice(key.indexOf('/') + 1), key.slice(0, key.indexOf('/'))));
      if (missed === undefined) return;
      options.logger.warn({ scope: target.scope, service: missed }, 'the watch missed a change: listing again');
      target.watch.relist();
    } catch (err) {
      options.logger.warn({ err, scope: target.scope }, 'periodic list failed: relisting through the informer');
      target.watch.relist();
    } finally {
      target.touched = undefined;
    }
  }

  const members = scopes.map(member);

  return {
    start(given) {
      handlers = given;
      stopped = false;
      for (const target of members) startMember(target);
    },
    async stop() {
      stopped = true;
      for (const target of members) clearTimeout(target.restartTimer);
      await Promise.all(members.map((target) => target.informer.stop()));
    },
    unsynced: () => members.filter((target) => !target.synced).map((target) => target.scope),
    get(namespace, name) {
      const target = members.find((candidate) => candidate.scope === '*' || candidate.scope === namespace);
      return target?.informer.get(name, namespace);
    },
    relist() {
      for (const target of members) void check(target);
    },
  };
}
