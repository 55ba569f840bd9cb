import type { ReconcileState } from './reconcile-state.js';

/** The sweep's lease and cursor in this process (`STORE_URL=memory://`, local runs: one replica). */
export function createMemoryReconcileState(now: () => number = Date.now): ReconcileState {
  let lease: { holder: string; expiresAt: number } | undefined;
  let cursor: number | null = null;
  const holds = (holder: string): boolean => lease?.holder === holder && lease.expiresAt > now();
  return {
    acquire(holder, ttlMs) {
      if (lease !== undefined && lease.expiresAt > now() && lease.holder !== holder) return Promise.resolve(false);
      lease = { holder, expiresAt: now() + ttlMs };
      return Promise.resolve(true);
    },
    release(holder) {
      if (holds(holder)) lease = undefined;
      return Promise.resolve();
    },
    readCursor: () => Promise.resolve(cursor),
    writeCursor(holder, createdGte) {
      if (!holds(holder)) return Promise.resolve(false);
      cursor = createdGte;
      return Promise.resolve(true);
    },
  };
}
