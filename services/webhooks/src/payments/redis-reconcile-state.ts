import type { Cluster, Redis } from 'ioredis';
import { createRedisLeases, createRedisStoreBase, holdsLua } from '@sp/storage';
import type { ReconcileState } from './reconcile-state.js';

// Both keys carry the hash tag {reconcile}: one Cluster slot, so a script may read the lease and write the cursor.
const WRITE_CURSOR = `
if not (${holdsLua('KEYS[1]', 'ARGV[1]')}) then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1`;

interface ReconcileCommands {
  reconcileWriteCursor(lease: string, cursor: string, holder: string, createdGte: number): Promise<number>;
}

/** The sweep's lease (`{prefix}{reconcile}:lease`, SET PX with the holder's token) and cursor (`{prefix}{reconcile}:cursor`) on Redis. */
export function createRedisReconcileState(connection: Redis | Cluster, prefix = 'webhooks:reconcile:'): ReconcileState {
  connection.defineCommand('reconcileWriteCursor', { numberOfKeys: 2, lua: WRITE_CURSOR });
  const redis = connection as (Redis | Cluster) & ReconcileCommands;
  const { run } = createRedisStoreBase(connection, { dependency: 'store' });
  const leases = createRedisLeases(connection, run);
  const lease = `${prefix}{reconcile}:lease`;
  const cursor = `${prefix}{reconcile}:cursor`;
  return {
    acquire: (holder, ttlMs) => leases.acquire(lease, holder, ttlMs),
    release: async (holder) => void (await leases.release(lease, holder)),
    readCursor: async () => {
      const value = await run(() => redis.get(cursor));
      return value === null ? null : Number(value);
    },
    writeCursor: async (holder, createdGte) => (await run(() => redis.reconcileWriteCursor(lease, cursor, holder, createdGte))) === 1,
  };
}
