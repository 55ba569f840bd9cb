import type { CoreV1Api, V1ConfigMap } from '@kubernetes/client-node';
import { apiStatus, withTimeout } from './kube-client.js';

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
  /** `namespace/name` of the ConfigMap, for logs. */
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
  namespace: string;
  name: string;
  timeoutMs: number;
}

interface State {
  records: Map<string, OwnedName>;
  /** Absent: the ConfigMap does not exist yet. */
  resourceVersion: string | undefined;
}

const ATTEMPTS = 3;

function parse(configMap: V1ConfigMap | undefined): State {
  const records = new Map<string, OwnedName>();
  for (const [name, value] of Object.entries(configMap?.data ?? {})) {
    try {
      const parsed = JSON.parse(value) as Partial<OwnedName>;
      if (typeof parsed.service === 'string' && typeof parsed.url === 'string') records.set(name, { service: parsed.service, url: parsed.url });
    } catch {
      // Not ours to interpret: a hand-edited entry is ignored rather than trusted.
    }
  }
  return { records, resourceVersion: configMap?.metadata?.resourceVersion };
}

const same = (a: OwnedName | undefined, b: OwnedName | undefined): boolean => a?.service === b?.service && a?.url === b?.url;

/**
 * Ownership records in one ConfigMap in the controller's namespace: a data key per graph name
 * (graph names are valid ConfigMap keys), the value `{"service":"ns/name","url":"…"}`. Writes
 * are serialized and carry the resourceVersion; a 409 re-reads and applies the change again.
 */
export function createConfigMapOwnership(options: ConfigMapOwnershipOptions): OwnershipRecords {
  const { api, namespace, name } = options;
  let state: State | undefined;
  let tail: Promise<unknown> = Promise.resolve();

  const read = async (): Promise<State> => {
    try {
      return parse(await api.readNamespacedConfigMap({ name, namespace }, withTimeout(options.timeoutMs)));
    } catch (err) {
      if (apiStatus(err) === 404) return parse(undefined);
      throw err;
    }
  };

  const write = async (current: State, records: Map<string, OwnedName>): Promise<State> => {
    const data = Object.fromEntries([...records].sort(([a], [b]) => a.localeCompare(b)).map(([key, owned]) => [key, JSON.stringify(owned)]));
    const body: V1ConfigMap = {
      metadata: { name, namespace, resourceVersion: current.resourceVersion, labels: { 'app.kubernetes.io/managed-by': 'graph-controller' } },
      data,
    };
    const saved =
      current.resourceVersion === undefined
        ? await api.createNamespacedConfigMap({ namespace, body }, withTimeout(options.timeoutMs))
        : await api.replaceNamespacedConfigMap({ name, namespace, body }, withTimeout(options.timeoutMs));
    return { records, resourceVersion: saved.metadata?.resourceVersion };
  };

  /** Applies `change` to the records and saves them, re-reading after a conflict. */
  const update = async (change: (records: Map<string, OwnedName>) => boolean): Promise<void> => {
    for (let attempt = 1; ; attempt += 1) {
      state ??= await read();
      const records = new Map(state.records);
      if (!change(records)) return;
      try {
        state = await write(state, records);
        return;
      } catch (err) {
        state = undefined;
        if (apiStatus(err) !== 409 || attempt >= ATTEMPTS) throw err;
      }
    }
  };

  const serialized = <T>(task: () => Promise<T>): Promise<T> => {
    const result = tail.then(task);
    tail = result.catch(() => undefined);
    return result;
  };

  return {
    description: `${namespace}/${name}`,
    load: () =>
      serialized(async () => {
        state = await read();
        return new Map(state.records);
      }),
    own: (key, owned) =>
      serialized(() =>
        update((records) => {
          if (same(records.get(key), owned)) return false;
          records.set(key, { service: owned.service, url: owned.url });
          return true;
        }),
      ),
    disown: (key) => serialized(() => update((records) => records.delete(key))),
  };
}
