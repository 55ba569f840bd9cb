import type { V1Service } from '@kubernetes/client-node';
import type { Logger } from '@sp/observability';
import type { GraphAnnotation } from './annotations.js';
import type { ClaimIndex } from './claim-index.js';
import type { ClaimMemory } from './claim-memory.js';
import { planName, resolveClaims, type GraphClaim, type NameAction } from './desired-state.js';
import type { SubgraphSync } from '../federation/subgraph-sync.js';
import type { EventRecorder } from '../kube/kube-event-recorder.js';
import type { GraphRegistryClient } from '../registry/graph-registry-client.js';
import type { OwnershipRecords } from '../ownership/ownership-records.js';
import { UNKNOWN, type RegistryView } from '../registry/registry-view.js';

/** How a reconcile ended (the `result` label of graph_controller_reconciles_total, with `error`). */
export type ReconcileResult = 'registered' | 'deleted' | 'unchanged' | 'conflict' | 'invalid';

export const EVENT_REASONS = {
  invalid: 'InvalidGraphAnnotation',
  conflict: 'GraphNameConflict',
  registered: 'GraphRegistered',
} as const;

/** This replica may not write (not the leader, or leadership was lost mid-reconcile). */
export class NotLeaderError extends Error {
  constructor() {
    super('not the leader');
    this.name = 'NotLeaderError';
  }
}

/**
 * Why a key is reconciled: a `change` the informers saw (the registry is read afresh), or a
 * `resync` re-check (the registry view, refreshed at the start of the resync, is trusted for
 * names that need nothing; anything to write is read afresh first).
 */
export type ReconcileCause = 'change' | 'resync';

export interface ReconcilerDeps {
  /** The Services' parsed annotations and the claims on each name. */
  claims: Pick<ClaimIndex, 'parsed' | 'claimsOn'>;
  /** One Service by `namespace/name` (for the Events about it). */
  getService(key: string): V1Service | undefined;
  graphRegistry: GraphRegistryClient;
  view: RegistryView;
  events: EventRecorder;
  memory: ClaimMemory;
  /** The names this controller registered, kept in the cluster. */
  ownership: OwnershipRecords;
  /** The current leadership term's signal, or undefined when this replica must not write. */
  writeSignal(): AbortSignal | undefined;
  /** Publishes the subgraph schemas of federated Services (federation/); without it, none are. */
  subgraphs?: SubgraphSync;
  logger: Logger;
}

export interface Reconciler {
  /** Brings the registry in line with the Service `namespace/name` and every Service sharing its names. */
  reconcile(key: string, cause?: ReconcileCause): Promise<ReconcileResult>;
  /** Names this controller holds registered (as last confirmed against the registry). */
  registeredNames(): number;
  /** Whether the key has state here (remembered claims, a reported problem) even without annotations. */
  isTracking(key: string): boolean;
}

interface NameOutcome {
  action: NameAction['kind'];
  losers: ReadonlySet<string>;
}

/** Runs `task` after every earlier task on the same name, so two keys never change one name at once. */
function createNameLocks(): <T>(name: string, task: () => Promise<T>) => Promise<T> {
  const tails = new Map<string, Promise<unknown>>();
  return <T>(name: string, task: () => Promise<T>): Promise<T> => {
    const result = (tails.get(name) ?? Promise.resolve()).then(task);
    const tail = result.catch(() => undefined);
    tails.set(name, tail);
    void tail.then(() => {
      if (tails.get(name) === tail) tails.delete(name);
    });
    return result;
  };
}

function summarize(key: string, parsed: GraphAnnotation, outcomes: readonly NameOutcome[]): ReconcileResult {
  if (parsed.kind === 'invalid') return 'invalid';
  if (outcomes.some((outcome) => outcome.losers.has(key))) return 'conflict';
  if (outcomes.some((outcome) => outcome.action === 'register')) return 'registered';
  if (outcomes.some((outcome) => outcome.action === 'delete')) return 'deleted';
  return 'unchanged';
}

/**
 * The idempotent reconcile. For a Service key it looks at every name involved (the one its
 * annotations claim now, and any it was seen claiming before), decides each name from all the
 * Services claiming it (the oldest wins), reads the registry and writes only what differs:
 * POST the winner's URL, or DELETE when nobody claims the name any more and the registry still
 * holds a URL a Service claimed (never someone else's). Every name the controller writes is in
 * its ownership records until it is deleted or left to someone else. Warning Events go to
 * Services with invalid annotations and to the losers of a conflict, once each (not on every resync).
 */
export function createReconciler(deps: ReconcilerDeps): Reconciler {
  const withNameLock = createNameLocks();
  /** name → URL confirmed in the registry. */
  const registered = new Map<string, string>();
  /** Service key → the problems last reported for it. */
  const invalidReported = new Map<string, string>();
  /** name → conflicts already reported (`loser winner`). */
  const conflictsReported = new Map<string, Set<string>>();

  const requireLeader = (): AbortSignal => {
    const signal = deps.writeSignal();
    if (!signal || signal.aborted) throw new NotLeaderError();
    return signal;
  };

  const reportInvalid = async (key: string, service: V1Service, parsed: GraphAnnotation): Promise<void> => {
    if (parsed.kind !== 'invalid') {
      invalidReported.delete(key);
      return;
    }
    const message = `graph not registered: ${parsed.problems.join('; ')}`;
    if (invalidReported.get(key) === message) return;
    requireLeader();
    deps.logger.warn({ service: key, problems: parsed.problems }, 'invalid graph annotations');
    if (await deps.events.record(service, 'Warning', EVENT_REASONS.invalid, message)) invalidReported.set(key, message);
  };

  const reportConflicts = async (name: string, winner: GraphClaim | undefined, losers: readonly GraphClaim[]): Promise<void> => {
    if (!winner || losers.length === 0) {
      conflictsReported.delete(name);
      return;
    }
    const previously = conflictsReported.get(name) ?? new Set<string>();
    const reported = new Set<string>();
    for (const loser of losers) {
      const id = `${loser.key} ${winner.key}`;
      if (previously.has(id) || (await reportConflict(name, winner, loser))) reported.add(id);
    }
    conflictsReported.set(name, reported);
  };

  const reportConflict = async (name: string, winner: GraphClaim, loser: GraphClaim): Promise<boolean> => {
    const service = deps.getService(loser.key);
    if (!service) return false;
    requireLeader();
    deps.logger.warn({ name, winner: winner.key, loser: loser.key }, 'graph name conflict');
    const message = `graph name "${name}" is already claimed by the older Service ${winner.key}; this Service is not registered`;
    return deps.events.record(service, 'Warning', EVENT_REASONS.conflict, message);
  };

  const apply = async (name: string, action: NameAction, winner: GraphClaim | undefined): Promise<void> => {
    if (action.kind === 'register') {
      await deps.graphRegistry.register(name, action.url, requireLeader());
      deps.view.note(name, action.url);
      deps.logger.info({ name, url: action.url, service: winner?.key }, 'graph registered');
      const service = winner && deps.getService(winner.key);
      if (service) await deps.events.record(service, 'Normal', EVENT_REASONS.registered, `registered graph "${name}" as ${action.url}`);
    } else if (action.kind === 'delete') {
      await deps.graphRegistry.remove(name, requireLeader());
      deps.view.note(name, undefined);
      deps.logger.info({ name }, 'graph deregistered');
    }
  };

  /** What the registry holds under the name: from the view when it shows nothing to do on a resync, else read now. */
  const registryUrlOf = async (name: string, winner: GraphClaim | undefined, knownUrls: ReadonlySet<string>, cause: ReconcileCause): Promise<string | undefined> => {
    const seen = cause === 'resync' ? deps.view.lookup(name) : UNKNOWN;
    if (seen !== UNKNOWN && ['unchanged', 'none'].includes(planName({ winner, registryUrl: seen, knownUrls }).kind)) return seen;
    const url = await deps.graphRegistry.get(name, requireLeader());
    deps.view.note(name, url);
    return url;
  };

  const reconcileName = async (name: string, cause: ReconcileCause): Promise<NameOutcome> => {
    const claims = deps.claims.claimsOn(name);
    const { winner, losers } = resolveClaims(claims);
    const knownUrls = deps.memory.urlsFor(name);
    const action = planName({ winner, registryUrl: await registryUrlOf(name, winner, knownUrls, cause), knownUrls });
    // Recorded before the write and forgotten after the delete: a crash in between leaves a
    // record too many (cleaned up on the next start), never a registration nobody owns.
    if (winner) {
      requireLeader();
      await deps.ownership.own(name, { service: winner.key, url: winner.url });
    }
    await apply(name, action, winner);
    if (!winner) {
      requireLeader();
      await deps.ownership.disown(name);
    }
    deps.memory.settle(name, claims);
    if (winner) registered.set(name, winner.url);
    else registered.delete(name);
    await reportConflicts(name, winner, losers);
    // Last: a subgraph that cannot be read fails the reconcile (retried with backoff) after its URL is settled.
    if (winner?.federated) await deps.subgraphs?.sync(name, winner.url, deps.getService(winner.key), requireLeader());
    else await deps.subgraphs?.leave(name, requireLeader(), winner !== undefined);
    return { action: action.kind, losers: new Set(losers.map((loser) => loser.key)) };
  };

  return {
    async reconcile(key, cause = 'change') {
      const service = deps.getService(key);
      const parsed = deps.claims.parsed(key);
      if (service) await reportInvalid(key, service, parsed);
      else invalidReported.delete(key);
      const names = new Set(deps.memory.namesOf(key));
      if (parsed.kind === 'graph') names.add(parsed.name);
      const outcomes: NameOutcome[] = [];
      for (const name of [...names].sort()) outcomes.push(await withNameLock(name, () => reconcileName(name, cause)));
      return summarize(key, parsed, outcomes);
    },
    registeredNames: () => registered.size,
    isTracking: (key) => invalidReported.has(key) || deps.memory.hasKey(key),
  };
}
