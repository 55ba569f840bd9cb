import { createHash, randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, backoffDelay, notFound } from '@sp/core';
import type { Logger } from '@sp/observability';
import type { SchemaChangeReport } from '@sp/graphs';
import type { SchemaAnnouncer } from '../schemas/schema-announcer.js';
import type { SchemaChecker } from '../schemas/schema-checker.js';
import type { CompositionError, SubgraphInput } from '../schemas/schema-job.js';
import { createTurns, type Evaluation, type SchemaSubject } from '../schemas/schema-subject.js';
import type { StoredSchemaVersion } from '../schemas/schema-versions.js';
import { supergraphInfoOf, type FederationStore, type StoredSupergraphVersion, type SubgraphChange, type SubgraphMember, type SupergraphCause, type SupergraphVersionInfo } from './federation-store.js';

export interface FederationSettings {
  /** Versions kept of each subgraph's schema. */
  keepSubgraph: number;
  /** Supergraph versions kept (each holds the supergraph, its public schema and every subgraph's SDL). */
  keepSupergraph: number;
  /** Subgraphs in one supergraph at most; a publish past it is answered 422. */
  maxSubgraphs: number;
  /** Total SDL of every subgraph at most (UTF-8 bytes); a publish past it is answered 422. */
  maxTotalBytes: number;
  /** Life of the composer's lease (longer than one composition may take: the composition budget and a margin). */
  leaseMs: number;
  /** How long a publish waits for another replica's composition before it is answered 503. */
  leaseWaitMs: number;
}

export const DEFAULT_FEDERATION: FederationSettings = { keepSubgraph: 100, keepSupergraph: 20, maxSubgraphs: 300, maxTotalBytes: 8 * 1024 * 1024, leaseMs: 20_000, leaseWaitMs: 30_000 };

/** The graph URLs, as the composer reads them (the routing URL of each subgraph). */
export interface GraphUrls {
  getUrl(name: string): Promise<string | undefined>;
}

export interface SupergraphComposerDeps {
  store: FederationStore;
  graphs: GraphUrls;
  checker: SchemaChecker;
  settings: FederationSettings;
  /** Sends the SchemaPublishedEvent of subgraph publishes, in supergraph version order; none: no events. */
  announcer?: SchemaAnnouncer;
  logger: Logger;
}

/** What a recomposition without a subgraph, or with its new URL, led to. */
export type RecomposeOutcome =
  /** The graph is no subgraph of the supergraph: nothing to compose. */
  | { outcome: 'not-a-subgraph' }
  | { outcome: 'composed'; supergraph: SupergraphVersionInfo; report: SchemaChangeReport }
  | { outcome: 'not-composable'; errors: CompositionError[] }
  /** Breaking changes of the public API under `reject-breaking`, without the override. */
  | { outcome: 'rejected'; report: SchemaChangeReport };

export interface SupergraphComposer {
  /** The schema subject of the graph `name`: publishing its schema composes the supergraph. */
  subject(name: string): SchemaSubject;
  /**
   * Composes the supergraph again without the subgraph `name` (`remove`) or with its URL now
   * registered (`url`), then runs `after` (the URL's removal or change) in the same turn. A
   * graph that is no subgraph just runs `after`.
   */
  recompose(name: string, cause: 'remove' | 'url', options: RecomposeOptions): Promise<RecomposeOutcome>;
  /** Runs `task` in the composer's turn: in this process' order, under the lease across replicas. */
  exclusive<T>(task: () => Promise<T>): Promise<T>;
}

export interface RecomposeOptions {
  publisher: string;
  /** Refuse breaking changes of the public API (the policy, unless overridden). */
  rejectBreaking: boolean;
  /** The write the recomposition goes with, in the same turn: after the composition (remove) or before it (url). */
  write(): Promise<void>;
}

const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');
const etag = (text: string): string => `"${sha256Hex(text)}"`;

/** Composition attempts against other replicas' before a publish is answered 503. */
const MAX_ATTEMPTS = 20;

const compositionBusy = (): AppError => new AppError(503, 'busy', 'the supergraph is being composed by another replica; retry later', { headers: { 'Retry-After': '1' } });

/** The metadata artifact: what the version is and what it was composed from (JSON). */
function metadataOf(info: Omit<SupergraphVersionInfo, 'etags'>): string {
  return JSON.stringify({ version: info.version, id: info.id, composedAt: info.composedAt, subgraphs: info.subgraphs });
}

/** A composition's artifacts and the change report of its public API. */
interface Composed {
  artifacts: { supergraph: string; sdl: string; services: string; sha256: Record<'supergraph' | 'sdl' | 'services', string> };
  report: SchemaChangeReport;
}

interface CurrentSupergraph {
  version: number;
  info: SupergraphVersionInfo | undefined;
}

/**
 * Composes the supergraph whenever a subgraph changes, one composition at a time across replicas:
 * a token-held lease in the store (`{graph:federation}:composer`) and this process' turns, so the
 * supergraph versions form one line and no composition is wasted on a race. Each commit is still a
 * compare-and-set on the supergraph's (and the subgraph's) newest number, so a holder that stalled
 * past its lease (a composition that finishes after a newer one) stores nothing and composes again
 * from what is newest. Compositions run in the schema worker (off the event loop, under the
 * composition budget).
 */
export function createSupergraphComposer(deps: SupergraphComposerDeps): SupergraphComposer {
  const { store, settings } = deps;
  const token = randomUUID();
  const turns = createTurns();

  async function underLease<T>(task: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + settings.leaseWaitMs;
    for (let attempt = 1; !(await store.acquireComposer(token, settings.leaseMs)); attempt += 1) {
      if (Date.now() >= deadline) throw compositionBusy();
      await sleep(backoffDelay(attempt, 10, 250));
    }
    try {
      return await task();
    } finally {
      await store.releaseComposer(token).catch((err: unknown) => deps.logger.warn({ err }, 'could not release the composer lease; it expires by itself'));
    }
  }

  const exclusive = <T>(task: () => Promise<T>): Promise<T> => turns(() => underLease(task));

  async function current(): Promise<CurrentSupergraph> {
    const version = await store.lastSupergraph();
    return { version, info: version === 0 ? undefined : await store.supergraphInfo(version) };
  }

  /** The members' SDLs, checked against the bounds, with the subgraph `name` replaced (or left out). */
  async function inputs(members: readonly SubgraphMember[], replaced?: SubgraphInput): Promise<SubgraphInput[]> {
    const others = members.filter((member) => member.name !== replaced?.name);
    if (others.length + (replaced === undefined ? 0 : 1) > settings.maxSubgraphs) {
      throw new AppError(422, 'too_many_subgraphs', `a supergraph holds at most ${settings.maxSubgraphs} subgraphs`);
    }
    const sdls = await store.subgraphSdls(others);
    const subgraphs = others.map((member, index) => {
      const sdl = sdls[index];
      if (sdl === undefined) throw new AppError(500, 'internal', `subgraph ${member.name} version ${member.version} is missing from the store`);
      return { name: member.name, url: member.url, sdl };
    });
    if (replaced !== undefined) subgraphs.push(replaced);
    const total = subgraphs.reduce((sum, subgraph) => sum + Buffer.byteLength(subgraph.sdl, 'utf8'), 0);
    if (total > settings.maxTotalBytes) throw new AppError(422, 'supergraph_too_large', `the subgraphs' schemas would total ${total} bytes; at most ${settings.maxTotalBytes}`);
    return subgraphs.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The version to store for a composition's artifacts. */
  function supergraphVersion(base: CurrentSupergraph, composed: Composed, subgraphs: SubgraphMember[], made: { cause: SupergraphCause; publisher: string }): StoredSupergraphVersion {
    const { cause, publisher } = made;
    const { artifacts, report } = composed;
    const info = {
      version: base.version + 1,
      id: randomUUID(),
      sha256: artifacts.sha256.supergraph,
      composedAt: new Date().toISOString(),
      publisher,
      previousVersion: base.version === 0 ? null : base.version,
      cause,
      subgraphs: [...subgraphs].sort((a, b) => (a.name < b.name ? -1 : 1)),
      counts: report.counts,
    };
    const metadata = metadataOf(info);
    const etags = { supergraph: `"${artifacts.sha256.supergraph}"`, sdl: `"${artifacts.sha256.sdl}"`, services: `"${artifacts.sha256.services}"`, metadata: etag(metadata) };
    return { ...info, etags, report, artifacts: { supergraph: artifacts.supergraph, sdl: artifacts.sdl, services: artifacts.services, metadata } };
  }

  /** An empty supergraph version: the last subgraph left (the CDN then has no supergraph to serve). */
  function emptyVersion(base: CurrentSupergraph, cause: SupergraphCause, publisher: string, report: SchemaChangeReport): StoredSupergraphVersion {
    const none = { supergraph: '', sdl: '', services: '[]', sha256: { supergraph: sha256Hex(''), sdl: sha256Hex(''), services: sha256Hex('[]') } };
    return supergraphVersion(base, { artifacts: none, report }, [], { cause, publisher });
  }

  const previousApi = async (base: CurrentSupergraph): Promise<string | undefined> =>
    base.info === undefined || base.info.subgraphs.length === 0 ? undefined : store.artifact(base.version, 'sdl');

  function subject(name: string): SchemaSubject {
    return {
      graph: name,
      path: `/${name}/schema`,
      history: store.subgraph(name),
      async evaluate(sdl, latest, publisher): Promise<Evaluation> {
        const url = await deps.graphs.getUrl(name);
        if (url === undefined) throw notFound(`graph ${name} is not registered: register its URL (POST /${name}) before its schema`);
        const base = await current();
        const subgraphs = await inputs(base.info?.subgraphs ?? [], { name, url, sdl });
        const composed = await deps.checker.compose(subgraphs, await previousApi(base), name);
        if (composed.kind !== 'composed') return composed;
        return {
          kind: 'valid',
          report: composed.report,
          async store(entry: StoredSchemaVersion) {
            const members = (base.info?.subgraphs ?? []).filter((member) => member.name !== name);
            members.push({ name, version: entry.version, url, sha256: entry.sha256 });
            const supergraph = supergraphVersion(base, composed, members, { cause: { kind: 'publish', subgraph: name }, publisher });
            const subgraph: SubgraphChange = { kind: 'publish', name, expected: latest.version, entry, keep: settings.keepSubgraph };
            if (!(await store.commit({ expected: base.version, supergraph, subgraph, keep: settings.keepSupergraph, eventPending: deps.announcer !== undefined }))) return undefined;
            deps.logger.info({ graph: name, subgraphVersion: entry.version, supergraphVersion: supergraph.version }, 'supergraph composed');
            return { composed: { version: supergraph.version, id: supergraph.id } };
          },
        };
      },
      diff: (before, after) => deps.checker.subgraphDiff(name, before, after),
      exclusive,
      announce: async (_version, composed) => {
        if (composed !== undefined) await deps.announcer?.announceThrough(composed.version);
      },
    };
  }

  /** The supergraph version with `members` only (none: an empty version), or why there is none. */
  async function recomposed(base: CurrentSupergraph, members: SubgraphMember[], reason: SupergraphCause, options: RecomposeOptions): Promise<StoredSupergraphVersion | RecomposeOutcome> {
    if (members.length === 0) return emptyVersion(base, reason, options.publisher, { changes: [], counts: { breaking: 0, dangerous: 0, safe: 0 } });
    const composed = await deps.checker.compose(await inputs(members), await previousApi(base), '');
    if (composed.kind === 'not-composable') return { outcome: 'not-composable', errors: composed.errors };
    if (composed.kind === 'invalid') return { outcome: 'not-composable', errors: composed.problems.map((problem) => ({ message: problem.message, code: 'INVALID_GRAPHQL', coordinate: null, subgraph: null })) };
    if (options.rejectBreaking && composed.report.counts.breaking > 0) return { outcome: 'rejected', report: composed.report };
    return supergraphVersion(base, composed, members, { cause: reason, publisher: options.publisher });
  }

  /** The members after the change: without `name` (remove), or with its new URL (url); undefined when nothing changes. */
  async function membersAfter(base: CurrentSupergraph, name: string, cause: 'remove' | 'url'): Promise<SubgraphMember[] | undefined> {
    const member = base.info?.subgraphs.find((candidate) => candidate.name === name);
    if (member === undefined) return undefined;
    const others = base.info!.subgraphs.filter((candidate) => candidate.name !== name);
    if (cause === 'remove') return others;
    const url = await deps.graphs.getUrl(name);
    return url === undefined || url === member.url ? undefined : [...others, { ...member, url }];
  }

  /** One try of a recomposition; undefined when another composition stored first. */
  async function recomposeOnce(name: string, cause: 'remove' | 'url', options: RecomposeOptions): Promise<RecomposeOutcome | undefined> {
    const base = await current();
    const members = await membersAfter(base, name, cause);
    if (members === undefined) return { outcome: 'not-a-subgraph' };
    const supergraph = await recomposed(base, members, { kind: cause, subgraph: name }, options);
    if ('outcome' in supergraph) return supergraph;
    const subgraph: SubgraphChange = cause === 'remove' ? { kind: 'remove', name } : { kind: 'none' };
    // A removal or a new URL publishes no schema version: no event (the announcer passes over it).
    if (!(await store.commit({ expected: base.version, supergraph, subgraph, keep: settings.keepSupergraph, eventPending: false }))) return undefined;
    deps.logger.info({ graph: name, cause, supergraphVersion: supergraph.version }, 'supergraph composed');
    return { outcome: 'composed', supergraph: supergraphInfoOf(supergraph), report: supergraph.report };
  }

  return {
    subject,
    exclusive,
    recompose: (name, cause, options) =>
      exclusive(async () => {
        if (cause === 'url') await options.write();
        for (let i = 0; i < MAX_ATTEMPTS; i += 1) {
          const outcome = await recomposeOnce(name, cause, options);
          if (outcome === undefined) continue;
          if (cause === 'remove' && (outcome.outcome === 'composed' || outcome.outcome === 'not-a-subgraph')) await options.write();
          return outcome;
        }
        throw compositionBusy();
      }),
  };
}
