import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { backoffDelay } from '@sp/core';
import { withSpan } from '@sp/observability';
import { parseEnvelope } from './event-schemas.js';
import { paymentEventActions } from './payment-event-actions.js';
import { runPaymentEvent, type PaymentEventPipelineDeps } from './payment-event-pipeline.js';
import type { ReconcileState } from './reconcile-state.js';

export interface SweeperOptions {
  /** Between sweeps (PaymentProvider__ReconcileIntervalSeconds); 0 switches the sweeper off. */
  intervalMs: number;
  /**
   * Each sweep lists events created since the stored cursor minus this, so an event that became
   * listable a little after its `created` (or a clock apart by that much) is not missed.
   */
  overlapSeconds: number;
  /** The lease's life; renewed after every page, so it only runs out when its holder is gone. */
  leaseMs: number;
  pageSize: number;
  /** First retry after a failed sweep; doubling up to the interval. */
  retryBaseMs: number;
}

export const defaultSweeperOptions: Omit<SweeperOptions, 'intervalMs'> = { overlapSeconds: 600, leaseMs: 60_000, pageSize: 100, retryBaseMs: 5_000 };

export interface SweepReport {
  /** False when another replica held the lease (nothing was done). */
  swept: boolean;
  /** Events listed and run through the pipeline. */
  events: number;
  /** Events that failed and are not dead: the cursor stays at the oldest of them, so the next sweep lists them again. */
  failed: number;
}

export interface Sweeper {
  /** Runs one sweep now (if this replica gets the lease). Rejects when the provider's API or the store fails. */
  sweepOnce(): Promise<SweepReport>;
  /** Starts sweeping every interval, the first time at once; nothing when the interval is 0. */
  start(): void;
  /** Stops after the event in progress (the cursor then stays where it was) and drops the lease. */
  stop(): Promise<void>;
}

export interface SweeperDeps extends PaymentEventPipelineDeps {
  state: ReconcileState;
  /** The clock, Unix ms: a sweep's start is where the next one's listing begins. */
  now: () => number;
}

/** The types the service handles: the API lists only those. */
const HANDLED_TYPES = [...paymentEventActions.keys()];

/**
 * Reconciliation with the payment provider: Stripe retries a failed delivery for three days and
 * never again, and an endpoint that is down or disabled receives nothing. One replica at a time
 * (a lease in the store) lists the handled events created since the stored cursor minus the
 * overlap, newest first page by page, and runs each through the same pipeline as a delivery, so
 * one already delivered is a `duplicate` and one never delivered is processed once. The cursor then
 * moves to the sweep's start, or to the oldest event that failed and is not dead yet.
 */
export function createSweeper(deps: SweeperDeps, options: SweeperOptions): Sweeper {
  const holder = randomUUID();
  const stopping = new AbortController();
  let loop: Promise<void> | undefined;

  /** Runs one listed event; the `created` of a failure the next sweep must list again, else undefined. */
  const reconcile = async (raw: unknown): Promise<number | undefined> => {
    let event;
    try {
      event = parseEnvelope(raw);
    } catch (err) {
      deps.logger.error({ err }, 'the payment provider listed an event that is no valid event; skipped');
      return undefined;
    }
    try {
      await runPaymentEvent(event, 'reconcile', deps);
      return undefined;
    } catch {
      const record = await deps.eventLog.get(event.id).catch(() => null);
      return record?.outcome === 'dead' ? undefined : event.created;
    }
  };

  /** Runs a page's events; false when the sweep is stopping. The report counts them, `retry` keeps the oldest failure's `created`. */
  const sweepPage = async (events: unknown[], report: SweepReport, retry: { from: number }): Promise<boolean> => {
    for (const raw of events) {
      if (stopping.signal.aborted) return false;
      report.events += 1;
      const retryFrom = await reconcile(raw);
      if (retryFrom === undefined) continue;
      report.failed += 1;
      retry.from = Math.min(retry.from, retryFrom);
    }
    return true;
  };

  const sweep = async (): Promise<SweepReport> => {
    const startedAt = Math.floor(deps.now() / 1000);
    const createdGte = ((await deps.state.readCursor()) ?? startedAt) - options.overlapSeconds;
    const report: SweepReport = { swept: true, events: 0, failed: 0 };
    const retry = { from: startedAt };
    let startingAfter: string | undefined;
    for (;;) {
      const page = await deps.paymentProvider.listEvents({ createdGte, types: HANDLED_TYPES, limit: options.pageSize, ...(startingAfter === undefined ? {} : { startingAfter }) });
      if (!(await sweepPage(page.events, report, retry))) return report; // stopping: the cursor stays
      startingAfter = (page.events.at(-1) as { id?: string } | undefined)?.id;
      if (!page.hasMore || startingAfter === undefined) break;
      if (!(await deps.state.acquire(holder, options.leaseMs))) return report; // the lease was lost: another replica sweeps now
    }
    await deps.state.writeCursor(holder, retry.from);
    return report;
  };

  const sweepOnce = async (): Promise<SweepReport> => {
    if (!(await deps.state.acquire(holder, options.leaseMs))) {
      deps.metrics.sweep('skipped');
      return { swept: false, events: 0, failed: 0 };
    }
    try {
      const report = await withSpan('webhooks reconcile sweep', { 'webhooks.reconcile.holder': holder }, sweep);
      deps.metrics.sweep('completed');
      deps.logger.info(report, 'reconciliation sweep done');
      return report;
    } catch (err) {
      deps.metrics.sweep('failed');
      throw err;
    } finally {
      await deps.state.release(holder).catch(() => undefined); // else the lease runs out by itself
    }
  };

  const run = async (): Promise<void> => {
    let failures = 0;
    while (!stopping.signal.aborted) {
      try {
        await sweepOnce();
        failures = 0;
      } catch (err) {
        failures += 1;
        deps.logger.warn({ err, failures }, 'reconciliation sweep failed; retrying with backoff');
      }
      const delay = failures === 0 ? options.intervalMs : backoffDelay(failures, options.retryBaseMs, options.intervalMs);
      await sleep(delay, undefined, { signal: stopping.signal }).catch(() => undefined);
    }
  };

  return {
    sweepOnce,
    start() {
      if (options.intervalMs > 0) loop ??= run();
    },
    async stop() {
      stopping.abort();
      await loop;
    },
  };
}
