import type { Logger } from '@sp/observability';
import { versionEvent, type SchemaAnnouncerDeps } from '../schemas/schema-announcer.js';
import type { FederationStore, SupergraphVersionInfo } from './federation-store.js';

/** Supergraph versions read per listing while announcing (the history's largest page). */
const BATCH = 100;

/**
 * The pending entries of the supergraph's announcement log: for each supergraph version a
 * subgraph publish (or rollback) made, that subgraph version's SchemaPublishedEvent (with `graph`
 * and `supergraphVersion`); a removal or a new URL has none. So subgraph events leave in the order
 * the supergraph was composed, one line across every subgraph and replica.
 */
export function subgraphAnnouncements(store: FederationStore, logger: Logger): SchemaAnnouncerDeps['pending'] {
  async function announcementOf(info: SupergraphVersionInfo): Promise<{ number: number; event?: ReturnType<typeof versionEvent> }> {
    const { version, cause } = info;
    const member = cause.kind === 'publish' ? info.subgraphs.find((candidate) => candidate.name === cause.subgraph) : undefined;
    if (member === undefined) return { number: version };
    const [subgraphVersion] = await store.subgraph(member.name).list(member.version + 1, 1);
    if (subgraphVersion?.version !== member.version) {
      logger.error({ graph: member.name, version: member.version, supergraphVersion: version }, 'SchemaPublishedEvent not sent: the subgraph version is no longer kept');
      return { number: version };
    }
    return { number: version, event: versionEvent(subgraphVersion, { graph: member.name, supergraphVersion: version }) };
  }
  return async (after, through) => {
    const infos = (await store.listSupergraphs(through + 1, BATCH)).filter((info) => info.version > after).reverse();
    const entries = [];
    for (const info of infos) entries.push(await announcementOf(info));
    return entries;
  };
}
