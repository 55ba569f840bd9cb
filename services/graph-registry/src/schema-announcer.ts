import { randomUUID } from 'node:crypto';
import { backoffDelay, schemaPublishedEvent, type EventPublisher, type Logger, type SchemaVersionInfo } from '@sp/platform';
import type { SchemaVersions } from './schema-versions.js';

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

export interface SchemaAnnouncerDeps {
  versions: SchemaVersions;
  events: EventPublisher;
  logger: Logger;
}

/**
 * Sends SchemaPublishedEvent for every stored version, once each, in version order, whichever
 * replica stored it.
 */
export interface SchemaAnnouncer {
  /** Sends the events of the versions not sent yet, until `version`'s is (or waitMs passed). */
  announceThrough(version: number): Promise<void>;
  close(): void;
}

/** Versions read per listing while sending (the history's largest page). */
const BATCH = 100;

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

  async function send(info: SchemaVersionInfo): Promise<void> {
    const { version, sha256, previousVersion, rollbackOf, publishedAt, publisher, counts } = info;
    await deps.events.publish(settings.topic, schemaPublishedEvent({ version, sha256, previousVersion, rollbackOf, publishedAt, publisher, changes: counts }));
  }

  /** Under the lease: the events after `announced` up to the newest version, in order. False when it had to stop (lease lost, broker failing). */
  async function sendPending(): Promise<boolean> {
    let { announced } = await deps.versions.announcement();
    for (;;) {
      const { last } = await deps.versions.announcement();
      if (announced >= last) return true;
      const infos = (await deps.versions.list(Math.min(last, announced + BATCH) + 1, BATCH)).filter((info) => info.version > announced).reverse();
      if (infos.length === 0) {
        // Dropped by the retention (Registry__SchemaHistory) before their events could be sent.
        deps.logger.error({ from: announced + 1, to: last }, 'SchemaPublishedEvent not sent: the versions are no longer kept');
        if (!(await deps.versions.markAnnounced(token, announced, last))) return false;
        announced = last;
        continue;
      }
      for (const info of infos) {
        if (!(await deps.versions.leaseAnnouncer(token, leaseMs))) return false;
        await send(info);
        if (!(await deps.versions.markAnnounced(token, announced, info.version))) return false;
        announced = info.version;
      }
    }
  }

  /** One turn: take the lease if free, send what is pending, give it back. Undefined when another replica holds it. */
  async function turnNow(): Promise<boolean | undefined> {
    const { announced, last } = await deps.versions.announcement();
    if (announced >= last) return true;
    if (!(await deps.versions.leaseAnnouncer(token, leaseMs))) return undefined;
    try {
      return await sendPending();
    } finally {
      await deps.versions.releaseAnnouncer(token).catch(() => undefined);
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
      if ((await deps.versions.announcement()).announced >= version) return;
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
