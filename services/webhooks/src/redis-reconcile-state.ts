import type { Cluster, Redis } from 'ioredis';
import { createRedisStoreBase } from '@sp/platform';
import type { ReconcileState } from './reconcile-state.js';

// Both keys carry the hash tag {reconcile}: one Cluster slot, so a script may read the lease and write the cursor.
const ACQUIRE = `
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if held then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;
const RELEASE = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`;
const WRITE_CURSOR = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[2], ARGV[2])
return 1`;

interface ReconcileCommands {
  reconcileAcquire(lease: string, holder: string, ttlMs: number): Promise<number>;
  reconcileRelease(lease: string, holder: string): Promise<number>;
  reconcileWriteCursor(lease: string, cursor: string, holder: string, createdGte: number): Promise<number>;
}

/** The sweep's lease (`{prefix}{reconcile}:lease`, SET PX with the holder's token) and cursor (`{prefix}{reconcile}:cursor`) on Redis. */
export function createRedisReconcileState(connection: Redis | Cluster, prefix = 'webhooks:reconcile:'): ReconcileState {
  connection.defineCommand('reconcileAcquire', { numberOfKeys: 1, lua: ACQUIRE });
  connection.defineCommand('reconcileRelease', { numberOfKeys: 1, lua: RELEASE });
  connection.defineCommand('reconcileWriteCursor', { numberOfKeys: 2, lua: WRITE_CURSOR });
  const redis = connection as (Redis | Cluster) & ReconcileCommands;
  const { run } = createRedisStoreBase(connection, { dependency: 'store' });
  const lease = `${prefix}{reconcile}:lease`;
  const cursor = `${prefix}{reconcile}:cursor`;
  return {
    acquire: async (holder, ttlMs) => (await run(() => redis.reconcileAcquire(lease, holder, ttlMs))) === 1,
    release: async (holder) => void (await run(() => redis.reconcileRelease(lease, holder))),
    readCursor: async () => {
      const value = await run(() => redis.get(cursor));
      return value === null ? null : Number(value);
    },
    writeCursor: async (holder, createdGte) => (await run(() => redis.reconcileWriteCursor(lease, cursor, holder, createdGte))) === 1,
  };
}
