import { createHash } from 'node:crypto';
import type { CoreV1Api, KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import type { Logger } from '@sp/observability';
import { apiStatus, withTimeout } from '../kube/kube-client.js';
import { listPaged } from '../kube/kube-request.js';

/** A name this controller registered: which Service's claim, and the URL it wrote. */
export interface OwnedName {
  service: string;
  url: string;
}

/**
 * Which registry names the controller registered, kept in the cluster so it outlives every
 * replica (external-dns keeps TXT ownership records for the same reason). A name is recorded
 * before its URL is written and forgotten after it is deleted, so a crash in between leaves a
 * record too many (cleaned up later), never a registration nobody owns. Only the leader writes.
 */
export interface OwnershipRecords {
  /** Where the records are, for logs. */
  readonly description: string;
  /** Reads the records from the cluster (and keeps them as the current state). */
  load(): Promise<ReadonlyMap<string, OwnedName>>;
  /** Records the name as ours; resolves at once when it already is, with this Service and URL. */
  own(name: string, owned: OwnedName): Promise<void>;
  /** Records many names at once (one write per shard they fall in): what a reconcile of each would record. */
  ownAll(entries: Iterable<readonly [string, OwnedName]>): Promise<void>;
  /** Forgets the name; resolves at once when it is not recorded. */
  disown(name: string): Promise<void>;
}

export interface ConfigMapOwnershipOptions {
  api: CoreV1Api;
  /** For the list, read page by page as JSON. */
  kubeConfig: KubeConfig;
  namespace: string;
  /** The records' names start with it (the Lease's name), and their label carries it. */
  prefix: string;
  timeoutMs: number;
  logger: Logger;
}

/** Label of every record: its value is the prefix, so two controllers in one namespace keep apart. */
export const RECORD_LABEL = 'graph-registry.io/ownership-records';
/** Label of a shard: its number. Records of older versions (one per name) do not have it. */
export const SHARD_LABEL = 'graph-registry.io/ownership-shard';
/**
 * Shards of the records. Fixed: a name's shard is a digest of the name modulo this, so changing it
 * moves entries (a leader that finds an entry in another shard than its own moves it).
 */
export const SHARDS = 64;
const PAGE = 100;
/** Old objects (records of older versions) deleted at once after their entries moved. */
const RETIRE_CONCURRENCY = 4;
/** Writes of a shard tried again after a 409 (another replica wrote it since it was read). */
const CONFLICT_RETRIES = 3;

/** The shard of a graph name: the first byte of its sha256, modulo SHARDS (64 divides 256: uniform). */
export function shardOf(name: string): number {
  return createHash('sha256').update(name).digest()[0]! % SHARDS;
}

const shardName = (prefix: string, shard: number): string => `${prefix}-owners-${String(shard).padStart(2, '0')}`;

/** The ConfigMap that holds the name's record. */
export function recordName(prefix: string, name: string): string {
  return shardName(prefix, shardOf(name));
}

/** The ConfigMap of records before per-name records: read once, moved over, then deleted. */
export const legacyRecordsName = (prefix: string): string => `${prefix}-registrations`;

/** Two records alike (undefined: no record). */
const same = (a: OwnedName | undefined, b: OwnedName | undefined): boolean => a?.service === b?.service && a?.url === b?.url;

function ownedOf(data: Record<string, string> | undefined): OwnedName | undefined {
  return typeof data?.service === 'string' && typeof data.url === 'string' ? { service: data.service, url: data.url } : undefined;
}

/** An entry of a shard (or of the old single ConfigMap): `{"service": …, "url": …}`; a hand-edited one is ignored rather than trusted. */
function parseEntry(value: string): OwnedName | undefined {
  try {
    return ownedOf(JSON.parse(value) as Record<string, string>);
  } catch {
    return undefined;
  }
}

interface Deferred {
  promise: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // a batch nobody waits for any more must not be an unhandled rejection
  return { promise, resolve, reject };
}

/** Changes of one shard waiting to be written together (null: forget the name). */
interface Batch {
  changes: Map<string, OwnedName | null>;
  done: Deferred;
}

interface Shard {
  index: number;
  /** As in the cluster (last read or written). */
  entries: Map<string, OwnedName>;
  /** undefined: the ConfigMap does not exist. */
  resourceVersion: string | undefined;
  /** Changes waiting for the next write. */
  pending: Batch | undefined;
  /** Changes being written now. */
  writing: Batch | undefined;
}

/** What a list of the labelled ConfigMaps found. */
interface Listing {
  shards: Map<number, { entries: Map<string, OwnedName>; resourceVersion: string | undefined }>;
  /** Entries outside their shard: records of older versions, or of another shard count. */
  strays: Map<string, OwnedName>;
  /** Objects to delete once their entries are in shards (older versions' records). */
  retired: string[];
}

/**
 * Ownership records in SHARDS ConfigMaps `{prefix}-owners-NN` in the controller's namespace
 * (labelled `graph-registry.io/ownership-records: <prefix>` and `graph-registry.io/ownership-shard: NN`),
 * each `data: {<graph name>: '{"service": "namespace/name", "url": …}'}` (graph names are valid
 * ConfigMap keys). Changes to one shard are written together: while a write of the shard is under
 * way, the changes that arrive wait and go in its next write, so a thousand names registered at
 * once cost a few writes of each shard, not a thousand writes; `ownAll` records a whole start's
 * names in one write per shard. A change to one name rewrites its shard (names/64 entries). Writes
 * carry the shard's resourceVersion: a 409 (another replica wrote it) re-reads the shard and
 * applies the changes again. What was read or written is kept, so an unchanged record is never
 * written again.
 */
export function createConfigMapOwnership(options: ConfigMapOwnershipOptions): OwnershipRecords {
  const { api, namespace, prefix, logger } = options;
  const call = () => withTimeout(options.timeoutMs);
  const shards: Shard[] = Array.from({ length: SHARDS }, (_, index) => ({ index, entries: new Map(), resourceVersion: undefined, pending: undefined, writing: undefined }));
  /** The shards as read by the last load; undefined until then (a write first reads). */
  let loaded: Promise<Listing> | undefined;

  const body = (shard: Shard, entries: ReadonlyMap<string, OwnedName>): V1ConfigMap => ({
    metadata: {
      name: shardName(prefix, shard.index),
      namespace,
      resourceVersion: shard.resourceVersion,
      labels: { [RECORD_LABEL]: prefix, [SHARD_LABEL]: String(shard.index), 'app.kubernetes.io/managed-by': 'graph-controller' },
    },
    data: Object.fromEntries([...entries].map(([name, owned]) => [name, JSON.stringify({ service: owned.service, url: owned.url })])),
  });

  /** The shard number of a listed ConfigMap, or undefined when it is not one of this controller's shards. */
  const shardsByName = new Map(shards.map((shard) => [shardName(prefix, shard.index), shard.index]));
  const shardNumber = (item: V1ConfigMap): number | undefined =>
    item.metadata?.labels?.[SHARD_LABEL] === undefined ? undefined : shardsByName.get(item.metadata.name ?? '');

  /** A record of the version before shards: one ConfigMap per name, `data: {name, service, url}`. */
  const keepOldRecord = (listing: Listing, item: V1ConfigMap): void => {
    const owned = ownedOf(item.data);
    if (owned && item.data?.name) listing.strays.set(item.data.name, owned);
    listing.retired.push(item.metadata?.name ?? '');
  };

  const keepListed = (listing: Listing, item: V1ConfigMap): void => {
    const shard = shardNumber(item);
    if (shard === undefined) return keepOldRecord(listing, item);
    const entries = new Map<string, OwnedName>();
    for (const [name, value] of Object.entries(item.data ?? {})) {
      const owned = parseEntry(value);
      if (owned && shardOf(name) === shard) entries.set(name, owned);
      else if (owned) listing.strays.set(name, owned);
    }
    listing.shards.set(shard, { entries, resourceVersion: item.metadata?.resourceVersion });
  };

  const list = async (labelSelector: string): Promise<Listing> => {
    const listing: Listing = { shards: new Map(), strays: new Map(), retired: [] };
    const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`;
    await listPaged(options.kubeConfig, path, { pageSize: PAGE, timeoutMs: options.timeoutMs, labelSelector, keep: (item: V1ConfigMap) => keepListed(listing, item) });
    return listing;
  };

  /** The shard as listed (absent: no ConfigMap yet). */
  const adopt = (shard: Shard, listing: Listing): void => {
    const found = listing.shards.get(shard.index);
    shard.entries = found?.entries ?? new Map<string, OwnedName>();
    shard.resourceVersion = found?.resourceVersion;
  };

  /** The single ConfigMap of records older versions kept (`data: {<name>: JSON}`), if it is still there. */
  const readLegacy = async (listing: Listing): Promise<void> => {
    let legacy: V1ConfigMap;
    try {
      legacy = await api.readNamespacedConfigMap({ name: legacyRecordsName(prefix), namespace }, call());
    } catch (err) {
      if (apiStatus(err) === 404) return;
      throw err;
    }
    for (const [name, value] of Object.entries(legacy.data ?? {})) {
      const owned = parseEntry(value);
      if (owned && !listing.strays.has(name)) listing.strays.set(name, owned);
    }
    listing.retired.push(legacyRecordsName(prefix));
  };

  const readAll = async (): Promise<Listing> => {
    const listing = await list(`${RECORD_LABEL}=${prefix}`);
    await readLegacy(listing);
    for (const shard of shards) adopt(shard, listing);
    return listing;
  };

  const ensureLoaded = (): Promise<Listing> => {
    loaded ??= readAll().catch((err: unknown) => {
      loaded = undefined;
      throw err;
    });
    return loaded;
  };

  /** Another replica wrote the shard since it was read: read it again. */
  const reread = async (shard: Shard): Promise<void> => {
    adopt(shard, await list(`${RECORD_LABEL}=${prefix},${SHARD_LABEL}=${shard.index}`));
  };

  /** The shard's entries with the changes applied, or undefined when they change nothing. */
  const applied = (shard: Shard, changes: ReadonlyMap<string, OwnedName | null>): Map<string, OwnedName> | undefined => {
    const next = new Map(shard.entries);
    for (const [name, owned] of changes) {
      if (owned) next.set(name, owned);
      else next.delete(name);
    }
    const unchanged = next.size === shard.entries.size && [...next].every(([name, owned]) => same(shard.entries.get(name), owned));
    return unchanged ? undefined : next;
  };

  const writeShard = async (shard: Shard, changes: ReadonlyMap<string, OwnedName | null>): Promise<void> => {
    for (let attempt = 0; ; attempt += 1) {
      const next = applied(shard, changes);
      if (!next) return;
      const record = body(shard, next);
      try {
        const written =
          shard.resourceVersion === undefined
            ? await api.createNamespacedConfigMap({ namespace, body: record }, call())
            : await api.replaceNamespacedConfigMap({ name: record.metadata!.name!, namespace, body: record }, call());
        shard.entries = next;
        shard.resourceVersion = written.metadata?.resourceVersion;
        return;
      } catch (err) {
        if (apiStatus(err) !== 409 || attempt >= CONFLICT_RETRIES) throw err;
        await reread(shard);
      }
    }
  };

  /** Writes the shard's waiting changes, one write at a time; what arrives meanwhile goes in the next. */
  const drain = async (shard: Shard): Promise<void> => {
    if (shard.writing) return;
    while (shard.pending) {
      const batch = shard.pending;
      shard.pending = undefined;
      shard.writing = batch;
      try {
        await ensureLoaded();
        await writeShard(shard, batch.changes);
        batch.done.resolve();
      } catch (err) {
        batch.done.reject(err);
      } finally {
        shard.writing = undefined;
      }
    }
  };

  /** The name's record is already as wanted (undefined) or being written so (that write): nothing to queue. */
  const settledAs = (shard: Shard, name: string, wanted: OwnedName | undefined): Promise<void> | undefined | 'write' => {
    const writing = shard.writing?.changes.has(name) ? shard.writing : undefined;
    if (writing) return same(writing.changes.get(name) ?? undefined, wanted) ? writing.done.promise : 'write';
    return same(shard.entries.get(name), wanted) ? undefined : 'write';
  };

  /** Queues a change of the name's record; resolves when it is in the cluster. */
  const change = async (name: string, owned: OwnedName | null): Promise<void> => {
    await ensureLoaded();
    const shard = shards[shardOf(name)]!;
    const wanted = owned ?? undefined;
    if (shard.pending?.changes.has(name)) {
      shard.pending.changes.set(name, owned); // the latest decision on the name is what its next write carries
      return shard.pending.done.promise;
    }
    const settled = settledAs(shard, name, wanted);
    if (settled !== 'write') return settled;
    shard.pending ??= { changes: new Map(), done: deferred() };
    shard.pending.changes.set(name, owned);
    const done = shard.pending.done.promise;
    void drain(shard);
    return done;
  };

  /** Deletes the objects whose entries moved into shards, a few at a time, in the background. */
  const retire = async (names: readonly string[]): Promise<void> => {
    let next = 0;
    await Promise.all(
      Array.from({ length: RETIRE_CONCURRENCY }, async () => {
        for (let index = next++; index < names.length; index = next++) {
          await api.deleteNamespacedConfigMap({ name: names[index]!, namespace }, call()).catch((err: unknown) => {
            if (apiStatus(err) !== 404) throw err;
          });
        }
      }),
    );
  };

  return {
    description: `${namespace}/${prefix}-owners-*`,
    async load() {
      loaded = undefined; // another leader may have written since: trust nothing until read
      const listing = await ensureLoaded();
      const moving = [...listing.strays].filter(([name]) => !shards[shardOf(name)]!.entries.has(name));
      await Promise.all(moving.map(([name, owned]) => change(name, owned)));
      if (listing.retired.length > 0) {
        // Entries are in their shards now; a crash before the old objects are gone only means
        // the next leader finds them again (and, their names being in shards, just deletes them).
        void retire(listing.retired).catch((err: unknown) => logger.warn({ err, records: listing.retired.length }, 'could not delete the ownership records of an older version: trying again at the next leadership'));
      }
      const records = new Map<string, OwnedName>();
      for (const shard of shards) for (const [name, owned] of shard.entries) records.set(name, owned);
      return records;
    },
    own: (name, owned) => change(name, { service: owned.service, url: owned.url }),
    async ownAll(entries) {
      await Promise.all([...entries].map(([name, owned]) => change(name, { service: owned.service, url: owned.url })));
    },
    disown: (name) => change(name, null),
  };
}
