import { createHash } from 'node:crypto';
import { schemaPublishedEvent, type EventPublisher, type Logger, type SchemaChangeReport, type SchemaVersionInfo } from '@sp/platform';
import { emptyReport } from './schema-changes.js';
import { schemaChecksBusy, type SchemaChecker } from './schema-checker.js';
import type { SdlProblem } from './schema-sdl.js';
import { infoOf, type LatestSchema, type SchemaVersions } from './schema-versions.js';

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
  /** A new version. */
  | { outcome: 'created'; version: SchemaVersionInfo; report: SchemaChangeReport }
  /** The SDL is the newest version's already: nothing stored. */
  | { outcome: 'unchanged'; version: SchemaVersionInfo; report: SchemaChangeReport }
  | { outcome: 'dry-run'; baseVersion: number | null; unchanged: boolean; report: SchemaChangeReport }
  /** Breaking changes under `reject-breaking`, without the override. */
  | { outcome: 'rejected'; baseVersion: number | null; report: SchemaChangeReport };

export interface SchemaPublisher {
  publish(request: PublishRequest): Promise<PublishOutcome>;
}

export const sha256Hex = (text: string): string => createHash('sha256').update(text, 'utf8').digest('hex');

/** Identifies an API key in the history without revealing it: `key:` and 16 hex digits of its SHA-256. */
export const keyFingerprint = (key: string): string => `key:${sha256Hex(key).slice(0, 16)}`;

/** Attempts of one publish against other replicas' publishes before it is answered 503. */
const MAX_ATTEMPTS = 20;
/** Publishes waiting for this process' previous ones; past it a publish is answered 503. */
const MAX_WAITING = 64;

export interface SchemaPublisherDeps {
  versions: SchemaVersions;
  checker: SchemaChecker;
  settings: SchemaPublishing;
  /** Where SchemaPublishedEvent goes; none: no events. */
  events?: EventPublisher;
  logger: Logger;
}

/**
 * Publishes schemas as versions: checked and compared with the newest version off the event
 * loop, then appended with a compare-and-set on the newest number. Publishes of this process
 * run one at a time (so their events leave in version order); one that loses the race to another
 * replica is compared again with the version that won, so every report is against the version
 * it really follows.
 */
export function createSchemaPublisher(deps: SchemaPublisherDeps): SchemaPublisher {
  let queue: Promise<unknown> = Promise.resolve();

  async function announce(version: SchemaVersionInfo): Promise<void> {
    if (deps.events === undefined) return;
    const { version: number, sha256, previousVersion, rollbackOf, publishedAt, publisher, counts } = version;
    try {
      await deps.events.publish(deps.settings.topic, schemaPublishedEvent({ version: number, sha256, previousVersion, rollbackOf, publishedAt, publisher, changes: counts }));
    } catch (err) {
      deps.logger.error({ err, version: number }, 'SchemaPublishedEvent not published; the version is stored');
    }
  }

  /** The newest version itself when `sha256` is its SDL's (an idempotent re-publish). */
  async function unchangedVersion(latest: LatestSchema, sha256: string): Promise<SchemaVersionInfo | undefined> {
    if (latest.version === 0 || latest.sdl === undefined || sha256Hex(latest.sdl) !== sha256) return undefined;
    const stored = await deps.versions.get(latest.version);
    return stored === undefined ? undefined : infoOf(stored);
  }

  /** What a checked, valid schema leads to before anything is written: a dry run's answer or the policy's refusal. */
  function verdict(request: PublishRequest, latest: LatestSchema, report: SchemaChangeReport): PublishOutcome | undefined {
    const baseVersion = latest.version === 0 ? null : latest.version;
    if (request.dryRun) return { outcome: 'dry-run', baseVersion, unchanged: latest.sdl === request.sdl, report };
    const refused = deps.settings.policy === 'reject-breaking' && report.counts.breaking > 0 && !request.allowBreaking;
    return refused ? { outcome: 'rejected', baseVersion, report } : undefined;
  }

  /** One try: undefined when another publish appended first, so the schema must be compared again. */
  async function attempt(request: PublishRequest, sha256: string): Promise<PublishOutcome | undefined> {
    const latest = await deps.versions.latest();
    const unchanged = request.dryRun ? undefined : await unchangedVersion(latest, sha256);
    if (unchanged !== undefined) return { outcome: 'unchanged', version: unchanged, report: emptyReport() };
    const { problems, report } = await deps.checker.compare(request.sdl, latest.sdl);
    if (problems.length > 0) return { outcome: 'invalid', problems };
    const early = verdict(request, latest, report);
    if (early !== undefined) return early;
    const entry = {
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
    if (!(await deps.versions.append(latest.version, entry, deps.settings.keep))) return undefined;
    const version = infoOf(entry);
    await announce(version);
    return { outcome: 'created', version, report };
  }

  async function publishNow(request: PublishRequest): Promise<PublishOutcome> {
    const sha256 = sha256Hex(request.sdl);
    for (let i = 0; i < MAX_ATTEMPTS; i += 1) {
      const outcome = await attempt(request, sha256);
      if (outcome !== undefined) return outcome;
    }
    throw schemaChecksBusy();
  }

  let waiting = 0;
  return {
    publish(request) {
      // A dry run writes nothing: it needs no turn.
      if (request.dryRun) return publishNow(request);
      if (waiting >= MAX_WAITING) return Promise.reject(schemaChecksBusy());
      waiting += 1;
      const result = queue.then(() => publishNow(request)).finally(() => (waiting -= 1));
      queue = result.catch(() => undefined);
      return result;
    },
  };
}
