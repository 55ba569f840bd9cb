import { createHash } from 'node:crypto';
import type { SchemaChangeReport, SchemaVersionInfo } from '@sp/graphs';
import { emptyReport } from './schema-changes.js';
import { schemaChecksBusy } from './schema-checker.js';
import type { CompositionError } from './schema-job.js';
import type { SdlProblem } from './schema-sdl.js';
import type { ComposedRef, SchemaSubject } from './schema-subject.js';
import { infoOf, type LatestSchema, type StoredSchemaVersion } from './schema-versions.js';

/** `allow`: publish and report; `reject-breaking`: refuse breaking changes unless overridden. */
export type SchemaPolicy = 'allow' | 'reject-breaking';

export interface SchemaPublishing {
  policy: SchemaPolicy;
  /** Versions kept; older ones are dropped, their numbers never reused. */
  keep: number;
  /** Topic of SchemaPublishedEvent. */
  topic: string;
}

export const DEFAULT_SCHEMA_PUBLISHING: SchemaPublishing = { policy: 'allow', keep: 100, topic: 'schema-changes' };

export interface PublishRequest {
  sdl: string;
  /** Fingerprint of the caller's key. */
  publisher: string;
  dryRun: boolean;
  /** X-Allow-Breaking-Changes: true. */
  allowBreaking: boolean;
  rollbackOf?: number;
}

export type PublishOutcome =
  | { outcome: 'invalid'; problems: SdlProblem[] }
  /** A subgraph's schema that does not compose with the others: nothing stored. */
  | { outcome: 'not-composable'; baseVersion: number | null; errors: CompositionError[] }
  /** A new version (and, for a subgraph, the supergraph version composed with it). */
  | { outcome: 'created'; version: SchemaVersionInfo; report: SchemaChangeReport; composed?: ComposedRef }
  /** The SDL is the newest version's already: nothing stored. */
  | { outcome: 'unchanged'; version: SchemaVersionInfo; report: SchemaChangeReport }
  | { outcome: 'dry-run'; baseVersion: number | null; unchanged: boolean; report: SchemaChangeReport }
  /** Breaking changes under `reject-breaking`, without the override. */
  | { outcome: 'rejected'; baseVersion: number | null; report: SchemaChangeReport };

export interface SchemaPublisher {
  publish(subject: SchemaSubject, request: PublishRequest): Promise<PublishOutcome>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Identifies an API key in the history without revealing it: `key:` and 16 hex digits of its SHA-256. */
export const keyFingerprint = (key: string): string => `key:${sha256Hex(key).slice(0, 16)}`;

/** Attempts of one publish against other replicas' publishes before it is answered 503. */
const MAX_ATTEMPTS = 20;

export interface SchemaPublisherDeps {
  settings: SchemaPublishing;
}

/**
 * Publishes schemas as versions of their subject (schema-subject.ts: the registry's own schema or
 * a subgraph's): checked and compared with the newest version off the event loop, then stored
 * with a compare-and-set on the newest number. Publishes a subject could race with run one at a
 * time (`exclusive`); one that loses the race to another replica is compared again with the
 * version that won, so every report is against the version it really follows. The answer waits
 * for the version's SchemaPublishedEvent (schema-announcer.ts: in order across replicas).
 */
export function createSchemaPublisher(deps: SchemaPublisherDeps): SchemaPublisher {

  /** The newest version itself when `sha256` is its SDL's (an idempotent re-publish). */
  async function unchangedVersion(subject: SchemaSubject, latest: LatestSchema, sha256: string): Promise<SchemaVersionInfo | undefined> {
    if (latest.version === 0 || latest.sdl === undefined || sha256Hex(latest.sdl) !== sha256) return undefined;
    const stored = await subject.history.get(latest.version);
    return stored === undefined ? undefined : infoOf(stored);
  }

  /** What a checked, valid schema leads to before anything is written: a dry run's answer or the policy's refusal. */
  function verdict(request: PublishRequest, latest: LatestSchema, report: SchemaChangeReport): PublishOutcome | undefined {
    const baseVersion = latest.version === 0 ? null : latest.version;
    if (request.dryRun) return { outcome: 'dry-run', baseVersion, unchanged: latest.sdl === request.sdl, report };
    const refused = deps.settings.policy === 'reject-breaking' && report.counts.breaking > 0 && !request.allowBreaking;
    return refused ? { outcome: 'rejected', baseVersion, report } : undefined;
  }

  /** Version `latest + 1` of the request's SDL. */
  function newEntry(latest: LatestSchema, request: PublishRequest, sha256: string, report: SchemaChangeReport): StoredSchemaVersion {
    return {
      version: latest.version + 1,
      sha256,
      publishedAt: new Date().toISOString(),
      publisher: request.publisher,
      previousVersion: latest.version === 0 ? null : latest.version,
      rollbackOf: request.rollbackOf ?? null,
      counts: report.counts,
      sdl: request.sdl,
      report,
    };
  }

  /** One try: undefined when another publish stored first, so the schema must be compared again. */
  async function attempt(subject: SchemaSubject, request: PublishRequest, sha256: string): Promise<PublishOutcome | undefined> {
    const latest = await subject.history.latest();
    const unchanged = request.dryRun ? undefined : await unchangedVersion(subject, latest, sha256);
    if (unchanged !== undefined) return { outcome: 'unchanged', version: unchanged, report: emptyReport() };
    const evaluation = await subject.evaluate(request.sdl, latest, request.publisher);
    if (evaluation.kind === 'invalid') return { outcome: 'invalid', problems: evaluation.problems };
    if (evaluation.kind === 'not-composable') return { outcome: 'not-composable', baseVersion: latest.version === 0 ? null : latest.version, errors: evaluation.errors };
    const { report } = evaluation;
    const early = verdict(request, latest, report);
    if (early !== undefined) return early;
    const entry = newEntry(latest, request, sha256, report);
    const stored = await evaluation.store(entry);
    if (stored === undefined) return undefined;
    await subject.announce(entry.version, stored.composed);
    return { outcome: 'created', version: infoOf(entry), report, ...(stored.composed === undefined ? {} : { composed: stored.composed }) };
  }

  async function publishNow(subject: SchemaSubject, request: PublishRequest): Promise<PublishOutcome> {
    const sha256 = sha256Hex(request.sdl);
    for (let i = 0; i < MAX_ATTEMPTS; i += 1) {
      const outcome = await attempt(subject, request, sha256);
      if (outcome !== undefined) return outcome;
    }
    throw schemaChecksBusy();
  }

  return {
    // A dry run writes nothing: it needs no turn.
    publish: (subject, request) => (request.dryRun ? publishNow(subject, request) : subject.exclusive(() => publishNow(subject, request))),
  };
}
