import { V1MicroTime, type CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { apiStatus, withTimeout } from './kube-client.js';

/** The leader-election fields of a coordination.k8s.io/v1 Lease. */
export interface LeaseRecord {
  /** Empty when nobody holds the lease (never taken, or released). */
  holderIdentity: string | undefined;
  leaseDurationSeconds: number;
  leaseTransitions: number;
  acquireTime?: Date;
  renewTime?: Date;
}

/** A record as read, with the resourceVersion that an update must name. */
export interface ObservedLease {
  record: LeaseRecord;
  resourceVersion: string;
}

/** Another writer got there first (409): the caller re-reads and tries again later. */
export class LeaseConflictError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LeaseConflictError';
  }
}

/** Get, create and update of one Lease, with optimistic concurrency on resourceVersion. */
export interface LeaseLock {
  /** `namespace/name`, for logs. */
  readonly description: string;
  get(): Promise<ObservedLease | undefined>;
  /** Throws LeaseConflictError when the Lease exists already. */
  create(record: LeaseRecord): Promise<ObservedLease>;
  /** Throws LeaseConflictError when the Lease changed since `resourceVersion`. */
  update(record: LeaseRecord, resourceVersion: string): Promise<ObservedLease>;
}

export interface KubeLeaseLockOptions {
  api: CoordinationV1Api;
  namespace: string;
  name: string;
  timeoutMs: number;
}

function observed(lease: V1Lease): ObservedLease {
  const spec = lease.spec ?? {};
  return {
    resourceVersion: lease.metadata?.resourceVersion ?? '',
    record: {
      holderIdentity: spec.holderIdentity === '' ? undefined : (spec.holderIdentity ?? undefined),
      leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
      leaseTransitions: spec.leaseTransitions ?? 0,
    },
  };
}

/** Lease times are MicroTime: RFC 3339 with exactly six fractional digits, or the API server rejects them. */
const microTime = (date: Date | undefined): Date | undefined => (date === undefined ? undefined : new V1MicroTime(date.getTime()));

function spec(record: LeaseRecord): V1Lease['spec'] {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    leaseTransitions: record.leaseTransitions,
    acquireTime: microTime(record.acquireTime),
    renewTime: microTime(record.renewTime),
  };
}

async function conflictAware<T>(call: () => Promise<T>, what: string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (apiStatus(err) === 409) throw new LeaseConflictError(`${what}: conflict`);
    throw err;
  }
}

/** A LeaseLock over the Kubernetes API. */
export function createKubeLeaseLock(options: KubeLeaseLockOptions): LeaseLock {
  const { api, namespace, name } = options;
  const call = () => withTimeout(options.timeoutMs);
  return {
    description: `${namespace}/${name}`,
    async get() {
      try {
        return observed(await api.readNamespacedLease({ name, namespace }, call()));
      } catch (err) {
        if (apiStatus(err) === 404) return undefined;
        throw err;
      }
    },
    create: (record) =>
      conflictAware(async () => observed(await api.createNamespacedLease({ namespace, body: { metadata: { name, namespace }, spec: spec(record) } }, call())), 'create lease'),
    update: (record, resourceVersion) =>
      conflictAware(
        async () =>
          observed(await api.replaceNamespacedLease({ name, namespace, body: { metadata: { name, namespace, resourceVersion }, spec: spec(record) } }, call())),
        'update lease',
      ),
  };
}
