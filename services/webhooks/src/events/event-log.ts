/** How an event reached the service: a webhook delivery, the reconciliation sweep, or a replay by an operator. */
export type EventSource = 'webhook' | 'reconcile' | 'replay';

/**
 * What became of an event so far. `failed`: its last attempt failed (Stripe or the sweep will try
 * again); `dead`: it failed `Webhooks__DeadAfterFailures` times or is older than Stripe's retry
 * window, so nothing will try again by itself: an operator fixes the cause and replays it.
 */
export type EventOutcome = 'processed' | 'deferred' | 'duplicate' | 'stale' | 'ignored' | 'failed' | 'dead';

export const EVENT_OUTCOMES: readonly EventOutcome[] = ['processed', 'deferred', 'duplicate', 'stale', 'ignored', 'failed', 'dead'];

/** One attempt at an event, as the pipeline saw it. */
export interface EventAttempt {
  id: string;
  type: string;
  /** The event's `created`, Unix seconds. */
  created: number;
  source: EventSource;
  /** What this attempt did: a result of the pipeline, or `failed` with the error's code. */
  result: Exclude<EventOutcome, 'dead'>;
  /** The stable error code of a failed attempt (`not_synchronized`, `unavailable`, …). */
  errorCode?: string;
  errorMessage?: string;
}

/** What the log knows of one event. */
export interface EventRecord {
  id: string;
  type: string;
  created: number;
  /** Unix milliseconds. */
  firstSeen: number;
  lastSeen: number;
  /** Attempts from any source. */
  deliveries: number;
  /** Failed attempts since the last success. */
  failures: number;
  /** The source of the last attempt. */
  source: EventSource;
  outcome: EventOutcome;
  /** The last failure's code and message; absent once the event succeeded. */
  error?: { code: string; message: string };
}

export interface EventLogQuery {
  outcome?: EventOutcome;
  type?: string;
  /** Events first seen at or after this Unix millisecond. */
  since?: number;
  limit: number;
  /** The `next` of the previous page. */
  cursor?: string;
}

export interface EventLogPage {
  events: EventRecord[];
  /** Where the next page starts; absent on the last page. */
  next?: string;
}

/**
 * Every payment provider event received, reconciled or replayed, newest first, kept for the
 * retention and bounded in count (oldest dropped first). Adapters: redis-event-log (shared by the
 * replicas), memory-event-log (local runs only). Rejects with a 503 AppError when unreachable.
 */
export interface EventLog {
  /**
   * Records an attempt and returns the event's record. A success never turns back into an
   * earlier state: once `processed` (or `stale`, `ignored`, `deferred`), a later `duplicate` attempt
   * leaves the outcome as it was; a failure after the limit or past the retry window is `dead`.
   */
  record(attempt: EventAttempt): Promise<EventRecord>;
  get(id: string): Promise<EventRecord | null>;
  list(query: EventLogQuery): Promise<EventLogPage>;
  /** Dead letters within the retention. */
  deadCount(): Promise<number>;
}

export interface EventLogOptions {
  /** How long a record is kept after the event was first seen (Webhooks__EventLogDays). */
  retentionMs: number;
  /** The most records kept; the oldest go first. */
  maxEvents: number;
  /** Failed attempts after which an event is dead (Webhooks__DeadAfterFailures). */
  deadAfterFailures: number;
  /** Stripe stops retrying an event this long after its `created`: a failure after that is dead. */
  retryWindowMs: number;
  /** The clock, Unix ms: when an event is seen, and what the retention keeps. */
  now: () => number;
}

/** Stripe retries a failed delivery for up to three days (https://docs.stripe.com/webhooks#retries). */
export const STRIPE_RETRY_WINDOW_MS = 3 * 24 * 60 * 60 * 1000;

/** What the log knew of an event before an attempt. */
export interface PreviousState {
  outcome: EventOutcome | undefined;
  /** Failed attempts since the last success, this one included when it failed. */
  failures: number;
}

/** The outcome an attempt leaves (the memory log decides with this; the Redis log's script follows the same rule). */
export function nextOutcome(attempt: EventAttempt, state: PreviousState, now: number, options: EventLogOptions): EventOutcome {
  if (attempt.result === 'failed') {
    const tooOld = now - attempt.created * 1000 > options.retryWindowMs;
    return state.failures >= options.deadAfterFailures || tooOld ? 'dead' : 'failed';
  }
  // A duplicate of an event that succeeded before is that success, seen again.
  if (attempt.result === 'duplicate' && state.outcome !== undefined && state.outcome !== 'failed' && state.outcome !== 'dead') return state.outcome;
  return attempt.result;
}
