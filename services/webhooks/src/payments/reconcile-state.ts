/**
 * What the reconciliation sweep keeps between runs, shared by the replicas: a lease, so one replica
 * sweeps at a time, and the cursor (Unix seconds) from which the next sweep lists events.
 * Adapters: redis-reconcile-state, memory-reconcile-state (local runs). Rejects with a 503 AppError
 * when the store is unreachable.
 */
export interface ReconcileState {
  /** Takes the lease for `ttlMs`, or extends it when `holder` has it already; false when another holder has it. */
  acquire(holder: string, ttlMs: number): Promise<boolean>;
  /** Drops the lease if `holder` still has it (compare and delete). */
  release(holder: string): Promise<void>;
  /** The stored cursor, null before the first sweep. */
  readCursor(): Promise<number | null>;
  /** Stores the cursor if `holder` still has the lease (a sweep that lost its lease stores nothing); false otherwise. */
  writeCursor(holder: string, createdGte: number): Promise<boolean>;
}
