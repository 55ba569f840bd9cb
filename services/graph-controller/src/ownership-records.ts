import { createHash } from 'node:crypto';
import type { CoreV1Api, KubeConfig, V1ConfigMap } from '@kubernetes/client-node';
import { apiStatus, withTimeout } from './kube-client.js';
import { listPaged } from './kube-request.js';

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
  /** Records the name as ours; a no-op when it already is, with this Service and URL. */
  own(name: string, owned: OwnedName): Promise<void>;
  /** Forgets the name; a no-op when it is not recorded. */
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
}

/** Label of every record: its value is the prefix, so two controllers in one namespace keep apart. */
export const RECORD_LABEL = 'graph-registry.io/ownership-records';
const PAGE = 500;

/**
 * The record's name: graph names may hold `_` and end in `.` or `-`, which object names may not,
 * so the name is a digest; the graph name itself is in the data.
 */
export function recordName(prefix: string, name: string): string {
  return `${prefix}-owns-${createHash('sha256').update(name).digest('hex').slice(0, 20)}`;
}

/** The ConfigMap of records before per-name records: read once, moved over, then deleted. */
export const legacyRecordsName = (prefix: string): string => `${prefix}-registrations`;

const same = (a: OwnedName | undefined, b: OwnedName | undefined): boolean => a?.service === b?.service && a?.url === b?.url;

function ownedOf(data: Record<string, string> | undefined): OwnedName | undefined {
  return typeof data?.service === 'string' && typeof data.url === 'string' ? { service: data.service, url: data.url } : undefined;
}

/**
 * Ownership records as one small ConfigMap per registered name in the controller's namespace
 * (`data: {name, service, url}`, labelled `graph-registry.io/ownership-records: <prefix>`). A
 * change writes one record of a few hundred bytes, whatever the number of names: the cost of a
 * registration does not grow with the cluster, and etcd keeps no ever-growing object. The cost
 * is one object per name (a list at the start of each leadership reads them, 500 per page) and
 * RBAC on ConfigMaps of the namespace rather than on one named object. What was read or written
 * is kept, so an unchanged record is never written again.
 */
export function createConfigMapOwnership(options: ConfigMapOwnershipOptions): OwnershipRecords {
  const { api, namespace, prefix } = options;
  const call = () => withTimeout(options.timeoutMs);
  /** As last read or written; undefined until loaded (then every own/disown asks the API server). */
  let known: Map<string, OwnedName> | undefined;

  const body = (name: string, owned: OwnedName): V1ConfigMap => ({
    metadata: { name: recordName(prefix, name), namespace, labels: { [RECORD_LABEL]: prefix, 'app.kubernetes.io/managed-by': 'graph-controller' } },
    data: { name, service: owned.service, url: owned.url },
  });

  const write = async (name: string, owned: OwnedName): Promise<void> => {
    const record = body(name, owned);
    try {
      await api.createNamespacedConfigMap({ namespace, body: record }, call());
    } catch (err) {
      if (apiStatus(err) !== 409) throw err;
      await api.replaceNamespacedConfigMap({ name: record.metadata!.name!, namespace, body: record }, call());
    }
  };

  const listAll = async (): Promise<Map<string, OwnedName>> => {
    const records = new Map<string, OwnedName>();
    await listPaged(options.kubeConfig, `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps`, {
      pageSize: PAGE,
      timeoutMs: options.timeoutMs,
      labelSelector: `${RECORD_LABEL}=${prefix}`,
      keep: (item: V1ConfigMap) => {
        const owned = ownedOf(item.data);
        if (owned && item.data?.name) records.set(item.data.name, owned);
      },
    });
    return records;
  };

  /** Records of the single ConfigMap older versions kept: written as records of their own, then the old one goes. */
  const migrateLegacy = async (records: Map<string, OwnedName>): Promise<void> => {
    let legacy: V1ConfigMap;
    try {
      legacy = await api.readNamespacedConfigMap({ name: legacyRecordsName(prefix), namespace }, call());
    } catch (err) {
      if (apiStatus(err) === 404) return;
      throw err;
    }
    for (const [name, value] of Object.entries(legacy.data ?? {})) {
      let owned: OwnedName | undefined;
      try {
        owned = ownedOf(JSON.parse(value) as Record<string, string>);
      } catch {
        owned = undefined; // a hand-edited entry is ignored rather than trusted
      }
      if (!owned || records.has(name)) continue;
      await write(name, owned);
      records.set(name, owned);
    }
    await api.deleteNamespacedConfigMap({ name: legacyRecordsName(prefix), namespace }, call()).catch((err: unknown) => {
      if (apiStatus(err) !== 404) throw err;
    });
  };

  return {
    description: `${namespace}/${prefix}-owns-*`,
    async load() {
      known = undefined; // another leader may have written since: trust nothing until read
      const records = await listAll();
      await migrateLegacy(records);
      known = records;
      return new Map(records);
    },
    async own(name, owned) {
      if (known && same(known.get(name), owned)) return;
      await write(name, owned);
      known?.set(name, { service: owned.service, url: owned.url });
    },
    async disown(name) {
      if (known && !known.has(name)) return;
      try {
        await api.deleteNamespacedConfigMap({ name: recordName(prefix, name), namespace }, call());
      } catch (err) {
        if (apiStatus(err) !== 404) throw err;
      }
      known?.delete(name);
    },
  };
}
