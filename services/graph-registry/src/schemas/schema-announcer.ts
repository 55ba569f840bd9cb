import { randomUUID } from 'node:crypto';
import { backoffDelay } from '@sp/core';
import type { Logger } from '@sp/observability';
import type { EventPublisher, PlatformEvent } from '@sp/messaging';
import { schemaPublishedEvent, type SchemaVersionInfo } from '@sp/graphs';
import type { AnnouncementLog, SchemaHistory } from './schema-versions.js';

export interface SchemaAnnouncerSettings {
  /** Topic of SchemaPublishedEvent. */
  topic: string;
  /** Life of the announcer's lease; renewed before each event. */
  leaseMs?: number;
  /** How often each replica looks for versions whose event was not sent (a broker outage, a replica gone mid-way). */
  sweepMs?: number;
  /** How long a publish waits for its version's event to be sent before it answers anyway (the sweep sends it later). */
  waitMs?: number;
}

/** An entry of an announcement log: its number and its event (none: nothing to send for it, e.g. a subgraph's removal). */
export interface Announcement {
  number: number;
  event?: PlatformEvent;
}

export interface SchemaAnnouncerDeps {
  /** Where the announced number and the lease are kept. */
  log: AnnouncementLog;
  /** The entries after `after` up to `through` still kept, oldest first. */
  pending(after: number, through: number): Promise<Announcement[]>;
  events: EventPublisher;
  logger: Logger;
}

/**
 * Sends SchemaPublishedEvent for every entry of a log, once each, in order, whichever replica
 * stored it: one announcer for the registry's own schema versions, one for the supergraph
 * versions (the events of subgraph publishes, in the order the supergraph was composed).
 */
export interface SchemaAnnouncer {
  /** Sends the events of the versions not sent yet, until `version`'s is (or waitMs passed). */
  announceThrough(version: number): Promise<void>;
  close(): void;
}

/** Versions read per listing while sending (the history's largest page). */
const BATCH = 100;

/** The SchemaPublishedEvent of a schema version (a subgraph's: with its graph and the supergraph version composed with it). */
export function versionEvent(info: SchemaVersionInfo, subgraph?: { graph: string; supergraphVersion: number }): PlatformEvent {
  const { version, sha256, previousVersion, rollbackOf, publishedAt, publisher, counts } = info;
  return schemaPublishedEvent({ version, sha256, previousVersion, rollbackOf, publishedAt, publisher, changes: counts, ...subgraph });
}

/** The pending entries of the registry's own schema history: each version's event. */
export function versionAnnouncements(history: SchemaHistory): SchemaAnnouncerDeps['pending'] {
  return async (after, through) => {
    const infos = (await history.list(through + 1, BATCH)).filter((info) => info.version > after).reverse();
    return infos.map((info) => ({ number: info.version, event: versionEvent(info) }));
  };
}

/**
 * The announcer. The store records the highest version whose event was sent (`announced`); one
 * replica at a time, holding a lease in the store, sends the events after it in order and moves
 * the record on after each, so events leave in version order across replicas: a replica that
 * stored version n + 1 while another's event for n is not out yet sends n first (or waits for the
 * holder that does). A version whose event could not be sent (broker down, replica gone) is sent
 * by the next publish or the periodic sweep: none is lost. An event sent whose record was not
 * moved (the holder died in between, or stalled past its lease) is sent again: consumers see it
 * twice with the same `ce_id` and version, and skip versions they have applied.
 */
export function createSchemaAnnouncer(deps: SchemaAnnouncerDeps, settings: SchemaAnnouncerSettings): SchemaAnnouncer {
  const token = randomUUID();
  const leaseMs = settings.leaseMs ?? 30_000;
  const waitMs = settings.waitMs ?? 15_000;

  /** Under the lease: the events after `announced` up to the newest version, in order. False when it had to stop (lease lost, broker failing). */
  async function sendPending(): Promise<boolean> {
    let { announced } = await deps.log.announcement();
    for (;;) {
      const { last } = await deps.log.announcement();
      if (announced >= last) return true;
      const through = Math.min(last, announced + BATCH);
      const entries = await deps.pending(announced, through);
      if (entries.length === 0) {
        // Dropped by the retention (Registry__SchemaHistory, Registry__SupergraphHistory) before
        // their events could be sent; later ones, past this batch, may still be kept.
        deps.logger.error({ from: announced + 1, to: through }, 'SchemaPublishedEvent not sent: the versions are no longer kept');
        if (!(await deps.log.markAnnounced(token, announced, through))) return false;
        announced = through;
        continue;
      }
      for (const { number, event } of entries) {
        if (!(await deps.log.leaseAnnouncer(token, leaseMs))) return false;
        if (event !== undefined) await deps.events.publish(settings.topic, event);
        if (!(await deps.log.markAnnounced(token, announced, number))) return false;
        announced = number;
      }
    }
  }

  /** One turn: take the lease if free, send what is pending, give it back. Undefined when another replica holds it. */
  async function turnNow(): Promise<boolean | undefined> {
    const { announced, last } = await deps.log.announcement();
    if (announced >= last) return true;
    if (!(await deps.log.leaseAnnouncer(token, leaseMs))) return undefined;
    try {
      return await sendPending();
    } finally {
      await deps.log.releaseAnnouncer(token).catch(() => undefined);
    }
  }

  // The lease is this process' token: its own turns (publishes, the sweep) take it one at a time.
  let turns: Promise<unknown> = Promise.resolve();
  function turn(): Promise<boolean | undefined> {
    const next = turns.then(turnNow);
    turns = next.catch(() => undefined);
    return next;
  }

  async function announceThrough(version: number): Promise<void> {
    const deadline = Date.now() + waitMs;
    for (let attempt = 1; ; attempt += 1) {
      if ((await deps.log.announcement()).announced >= version) return;
      const outcome = await turn();
      if (outcome === false) return; // the broker failed (logged by the publisher): the sweep sends it later
      if (outcome === undefined && Date.now() >= deadline) {
        deps.logger.warn({ version }, 'SchemaPublishedEvent not sent yet: another replica holds the announcer lease; the sweep sends it');
        return;
      }
      if (outcome === undefined) await new Promise((resolve) => setTimeout(resolve, backoffDelay(attempt, 10, 200)));
    }
  }

  const sweep = setInterval(() => {
    turn().catch((err: unknown) => deps.logger.warn({ err }, 'SchemaPublishedEvent sweep failed; trying again'));
  }, settings.sweepMs ?? 10_000);
  sweep.unref();

  return {
    async announceThrough(version) {
      try {
        await announceThrough(version);
      } catch (err) {
        deps.logger.error({ err, version }, 'SchemaPublishedEvent not sent yet; the version is stored and the sweep sends it');
      }
    },
    close: () => clearInterval(sweep),
  };
}
