import { withDeadline } from '@sp/core';
import type { Logger } from '@sp/observability';
import { LeaseConflictError, type LeaseLock, type LeaseRecord } from './lease-lock.js';

export interface LeaderElectorOptions {
  lock: LeaseLock;
  identity: string;
  /** How long others wait, after they last saw the lease change, before taking it over. */
  leaseDurationMs: number;
  /** How long the leader keeps leading without a successful renewal: shorter than the lease duration, so it stops before anyone else can start. */
  renewDeadlineMs: number;
  /** Pause between attempts to acquire or renew. */
  retryPeriodMs: number;
  logger: Logger;
  /** Monotonic milliseconds, what the timing reads; replaceable in tests. */
  now?: () => number;
  /** The wall clock (Unix ms) of the Lease's acquireTime and renewTime, which other replicas read. */
  wallClock: () => number;
}

/** What the elector tells as leadership comes and goes; given to `start`, so their reader can be built after the elector. */
export interface LeadershipHandlers {
  onStartedLeading(): void;
  onStoppedLeading(): void;
}

export interface LeaderElector {
  start(handlers: LeadershipHandlers): void;
  /**
   * Stops campaigning and leading at once. With `release`, a leader then hands the lease back
   * (no holder, a one-second duration) so a successor takes over without waiting for it to expire.
   */
  stop(options: { release: boolean }): Promise<void>;
  /** True only while a renewal succeeded within the renew deadline. */
  isLeader(): boolean;
  /**
   * Undefined while the Lease answers; otherwise why not: no attempt to read or write it got an
   * answer for a lease duration (API server unreachable, RBAC denying the Lease), so this replica
   * can neither lead nor know who does. Shown in /readyz.
   */
  problem(): string | undefined;
}

type Attempt = 'leading' | 'held-by-other' | 'failed';

/**
 * Leader election on a coordination.k8s.io/v1 Lease, after client-go's leaderelection package:
 * acquire when the Lease is absent, released, or unchanged for its duration as measured on this
 * replica's clock (so clock skew between nodes does not matter); renew every retry period; stop
 * leading when renewals fail past the renew deadline, or another holder shows up.
 * @kubernetes/client-node has no leader election of its own.
 */
export function createLeaderElector(options: LeaderElectorOptions): LeaderElector {
  const now = options.now ?? (() => performance.now());
  const durationSeconds = Math.max(1, Math.ceil(options.leaseDurationMs / 1000));
  let running = false;
  let handlers: LeadershipHandlers | undefined;
  let leading = false;
  /** When the last successful renewal was sent (its start, which is the conservative end). */
  let renewedAt = Number.NEGATIVE_INFINITY;
  let acquiredAt = new Date(options.wallClock());
  let observedVersion: string | undefined;
  let observedAt = 0;
  let loopTimer: NodeJS.Timeout | undefined;
  let deadlineTimer: NodeJS.Timeout | undefined;
  let attempt: Promise<void> | undefined;
  /** When the Lease last answered (a read, a write, or a 409), or when campaigning started. */
  let answeredAt = 0;
  let lastError = '';

  const isLeader = (): boolean => leading && now() - renewedAt < options.renewDeadlineMs;

  const stopLeading = (why: string): void => {
    clearTimeout(deadlineTimer);
    if (!leading) return;
    leading = false;
    const fields = { lease: options.lock.description, identity: options.identity, why };
    if (running) options.logger.warn(fields, 'lost leadership');
    else options.logger.info(fields, 'stopped leading');
    handlers?.onStoppedLeading();
  };

  /** Fires at the renew deadline even when a renewal request hangs, so writing stops on time. */
  const armDeadline = (): void => {
    clearTimeout(deadlineTimer);
    deadlineTimer = setTimeout(() => {
      // Timers may fire a little early against the monotonic clock: check again until it has passed.
      if (isLeader()) armDeadline();
      else stopLeading('renew deadline passed');
    }, Math.max(1, renewedAt + options.renewDeadlineMs - now()));
    deadlineTimer.unref();
  };

  const ours = (transitions: number, keepAcquireTime: boolean): LeaseRecord => {
    const wall = new Date(options.wallClock());
    if (!keepAcquireTime) acquiredAt = wall;
    return { holderIdentity: options.identity, leaseDurationSeconds: durationSeconds, leaseTransitions: transitions, acquireTime: acquiredAt, renewTime: wall };
  };

  const tryAcquireOrRenew = async (): Promise<Attempt> => {
    const current = await options.lock.get();
    if (!current) {
      observedVersion = (await options.lock.create(ours(0, false))).resourceVersion;
      observedAt = now();
      return 'leading';
    }
    if (current.resourceVersion !== observedVersion) {
      observedVersion = current.resourceVersion;
      observedAt = now();
    }
    const { holderIdentity, leaseDurationSeconds, leaseTransitions } = current.record;
    const mine = holderIdentity === options.identity;
    if (holderIdentity !== undefined && !mine && now() < observedAt + leaseDurationSeconds * 1000) return 'held-by-other';
    const next = ours(mine ? leaseTransitions : leaseTransitions + 1, mine && leading);
    observedVersion = (await options.lock.update(next, current.resourceVersion)).resourceVersion;
    observedAt = now();
    return 'leading';
  };

  const tick = async (): Promise<void> => {
    const started = now();
    let outcome: Attempt = 'failed';
    try {
      outcome = await tryAcquireOrRenew();
      answeredAt = now();
    } catch (err) {
      if (err instanceof LeaseConflictError) answeredAt = now();
      else {
        lastError = err instanceof Error ? err.message : String(err);
        options.logger.warn({ err, lease: options.lock.description }, 'lease request failed');
      }
    }
    if (!running) return;
    if (outcome === 'leading') {
      renewedAt = started;
      armDeadline();
      if (!leading) {
        leading = true;
        options.logger.info({ lease: options.lock.description, identity: options.identity }, 'started leading');
        handlers?.onStartedLeading();
      }
    } else if (outcome === 'held-by-other') stopLeading('the lease has another holder');
    else if (!isLeader()) stopLeading('renew deadline passed');
  };

  const loop = (): void => {
    attempt = tick().finally(() => {
      attempt = undefined;
      if (!running) return;
      // Candidates spread their attempts a little, as client-go's jitter does.
      const delay = leading ? options.retryPeriodMs : options.retryPeriodMs * (1 + Math.random() * 0.2);
      loopTimer = setTimeout(loop, delay);
    });
  };

  const release = async (): Promise<void> => {
    const current = await options.lock.get();
    if (current?.record.holderIdentity !== options.identity) return;
    const wall = new Date(options.wallClock());
    await options.lock.update(
      { holderIdentity: undefined, leaseDurationSeconds: 1, leaseTransitions: current.record.leaseTransitions, acquireTime: wall, renewTime: wall },
      current.resourceVersion,
    );
    options.logger.info({ lease: options.lock.description, identity: options.identity }, 'released the lease');
  };

  return {
    start(given) {
      if (running) return;
      handlers = given;
      running = true;
      answeredAt = now();
      loop();
    },
    async stop({ release: shouldRelease }) {
      running = false;
      clearTimeout(loopTimer);
      const wasLeader = isLeader();
      stopLeading('stopping');
      // Lease calls have timeouts of their own; still, a hung one must not hold up a shutdown.
      await withDeadline(attempt ?? Promise.resolve(), options.retryPeriodMs).catch(() => undefined);
      if (wasLeader && shouldRelease) await release().catch((err: unknown) => options.logger.warn({ err }, 'could not release the lease'));
    },
    isLeader,
    problem() {
      if (!running) return 'not campaigning';
      const silentMs = now() - answeredAt;
      if (silentMs <= options.leaseDurationMs) return undefined;
      return `lease ${options.lock.description} unanswered for ${Math.round(silentMs / 1000)}s: ${lastError}`;
    },
  };
}
