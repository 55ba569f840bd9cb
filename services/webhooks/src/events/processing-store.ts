/** What `claim` found for an event id. */
export type ClaimOutcome =
  /** Nobody processed or is processing the event: the caller holds the claim (identified by `token`). */
  | { state: 'claimed'; token: string }
  /** The event was processed before. */
  | { state: 'done' }
  /** Another request holds a live claim on the event right now. */
  | { state: 'busy' };

/** The newest change of a payment provider object that was applied, or its deletion (a tombstone). */
export interface ObjectVersion {
  /** Unix seconds: the `created` of the newest event applied (or the object's own `updated`). */
  created: number;
  deleted: boolean;
}

/**
 * Remembers which payment provider events were processed, and which are being processed, so a
 * redelivered event is acknowledged without being done twice; and the version of each provider
 * object applied, so an older event delivered late changes nothing. A claim is also a lock
 * (process-once.ts `withClaim`: one writer per provider object). Implementations:
 * redis-processing-store (the real one, shared by all replicas) and memory-processing-store (local
 * runs only).
 * Every method rejects with a 503 AppError when the backend cannot be reached.
 */
export interface ProcessingStore {
  /** Names the backend in readiness reports and logs. */
  readonly name: string;
  /**
   * Atomically: `done` when processed, else take the claim for `leaseMs` unless someone holds it.
   * A claim is only returned once a replica has it (Redis with replicas), so a failover cannot hand it to a second delivery.
   */
  claim(eventId: string, leaseMs: number): Promise<ClaimOutcome>;
  /** Marks the event processed for `retentionMs` and drops the claim (if still ours); resolves once a replica has the marker. Idempotent. */
  complete(eventId: string, token: string, retentionMs: number): Promise<void>;
  /** Drops the claim if it is still ours, so a redelivery can process the event. */
  release(eventId: string, token: string): Promise<void>;
  /** The version of `objectKey` (e.g. `product:prod_1`) last recorded, null when unknown (never seen, or forgotten). */
  readVersion(objectKey: string): Promise<ObjectVersion | null>;
  /**
   * Records the version of `objectKey` for `retentionMs` (callers hold the object's claim),
   * atomically never lowering it and never replacing a tombstone with a live version.
   */
  recordVersion(objectKey: string, version: ObjectVersion, retentionMs: number): Promise<void>;
  /** Readiness: rejects when the backend is unusable. */
  check(): Promise<void>;
  close(): Promise<void>;
}
