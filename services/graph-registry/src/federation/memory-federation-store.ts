import { createMemoryAnnouncementLog, createMemoryLease } from '../schemas/memory-announcement-log.js';
import { infoOf, type SchemaHistory, type StoredSchemaVersion } from '../schemas/schema-versions.js';
import { supergraphInfoOf, type FederationStore, type StoredSupergraphVersion } from './federation-store.js';

interface MemoryHistory {
  last: number;
  versions: Map<number, StoredSchemaVersion>;
}

/** Drops the oldest entries of `versions` beyond `keep`. */
function trim<T>(versions: Map<number, T>, keep: number, dropped?: (value: T) => void): void {
  const excess = versions.size - keep;
  if (excess <= 0) return;
  for (const version of [...versions.keys()].sort((a, b) => a - b).slice(0, excess)) {
    dropped?.(versions.get(version)!);
    versions.delete(version);
  }
}

function historyView(history: () => MemoryHistory | undefined): SchemaHistory {
  return {
    latest() {
      const current = history();
      if (current === undefined) return Promise.resolve({ version: 0 });
      const sdl = current.versions.get(current.last)?.sdl;
      return Promise.resolve(sdl === undefined ? { version: current.last } : { version: current.last, sdl });
    },
    list(before, limit) {
      const versions = history()?.versions ?? new Map<number, StoredSchemaVersion>();
      const numbers = [...versions.keys()].filter((version) => before === undefined || version < before).sort((a, b) => b - a);
      return Promise.resolve(numbers.slice(0, limit).map((version) => infoOf(versions.get(version)!)));
    },
    get: (version) => Promise.resolve(history()?.versions.get(version)),
  };
}

/** Subgraph schemas and supergraph versions in this process' memory (`STORE_URL=memory://`, local runs only). */
export function createMemoryFederationStore(): FederationStore {
  const subgraphs = new Map<string, MemoryHistory>();
  const supergraphs = new Map<number, StoredSupergraphVersion>();
  const byId = new Map<string, number>();
  let last = 0;
  const composer = createMemoryLease();
  const { appending, ...announcements } = createMemoryAnnouncementLog(() => last);

  return {
    subgraph: (name) => historyView(() => subgraphs.get(name)),
    subgraphSdls: (members) => Promise.resolve(members.map(({ name, version }) => subgraphs.get(name)?.versions.get(version)?.sdl)),
    lastSupergraph: () => Promise.resolve(last),
    supergraphInfo(version) {
      const stored = supergraphs.get(version);
      return Promise.resolve(stored === undefined ? undefined : supergraphInfoOf(stored));
    },
    listSupergraphs(before, limit) {
      const numbers = [...supergraphs.keys()].filter((version) => before === undefined || version < before).sort((a, b) => b - a);
      return Promise.resolve(numbers.slice(0, limit).map((version) => supergraphInfoOf(supergraphs.get(version)!)));
    },
    supergraphReport: (version) => Promise.resolve(supergraphs.get(version)?.report),
    artifact: (version, kind) => Promise.resolve(supergraphs.get(version)?.artifacts[kind]),
    versionOfId: (id) => Promise.resolve(byId.get(id)),
    commit({ expected, supergraph, subgraph, keep, eventPending }) {
      if (expected !== last) return Promise.resolve(false);
      if (subgraph.kind === 'publish') {
        const history = subgraphs.get(subgraph.name) ?? { last: 0, versions: new Map<number, StoredSchemaVersion>() };
        if (history.last !== subgraph.expected) return Promise.resolve(false);
        history.last = subgraph.expected + 1;
        history.versions.set(history.last, { ...subgraph.entry, version: history.last });
        trim(history.versions, subgraph.keep);
        subgraphs.set(subgraph.name, history);
      } else if (subgraph.kind === 'remove') {
        subgraphs.get(subgraph.name)?.versions.clear();
      }
      appending(expected, eventPending);
      last = expected + 1;
      supergraphs.set(last, { ...supergraph, version: last });
      byId.set(supergraph.id, last);
      trim(supergraphs, keep, (dropped) => byId.delete(dropped.id));
      return Promise.resolve(true);
    },
    acquireComposer: (token, ttlMs) => composer.acquire(token, ttlMs),
    releaseComposer: (token) => composer.release(token),
    ...announcements,
  };
}
