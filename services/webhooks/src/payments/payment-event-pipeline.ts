import { toAppError } from '@sp/core';
import { livemodeMismatch } from '../errors.js';
import type { EventAttempt, EventLog, EventSource } from '../events/event-log.js';
import type { Envelope } from './event-schemas.js';
import type { ActionResult, PaymentActionDeps } from './payment-action.js';
import { paymentEventActions } from './payment-event-actions.js';
import { processOnce } from '../events/process-once.js';
import type { WebhooksMetrics } from '../webhooks-metrics.js';

export interface PaymentEventPipelineDeps extends PaymentActionDeps {
  metrics: WebhooksMetrics;
  /** The mode of the configured API key: events of the other mode are refused. */
  livemode: boolean;
  eventLog: EventLog;
}

export type PipelineResult = ActionResult | 'ignored';

/** Writes the attempt to the event log; a log that cannot be written never fails the event itself (the attempt is logged as a warning). */
async function logAttempt(deps: PaymentEventPipelineDeps, attempt: EventAttempt): Promise<void> {
  await deps.eventLog.record(attempt).catch((err: unknown) => deps.logger.warn({ err, eventId: attempt.id, result: attempt.result }, 'payment provider event not written to the event log'));
}

/** Counts the attempt: webhook deliveries in `webhook_events_total`, sweeps and replays in `webhook_reconciled_events_total`. */
function count(deps: PaymentEventPipelineDeps, source: EventSource, type: string, result: PipelineResult | 'refused' | 'retry' | 'failed'): void {
  if (source === 'webhook') deps.metrics.event('stripe', type, result);
  else deps.metrics.reconciled(source, result === 'refused' || result === 'retry' ? 'failed' : result);
}

/** 400 for an event of the other mode than the API key (a misconfiguration: its own metric and an error log line). */
function checkLivemode(event: Envelope, deps: PaymentEventPipelineDeps): void {
  if (event.livemode === deps.livemode) return;
  deps.metrics.livemodeMismatch(event.livemode);
  deps.logger.error({ eventId: event.id, type: event.type, eventLivemode: event.livemode }, 'payment provider event of the other mode than PAYMENT_PROVIDER_API_KEY refused: check the webhook signing secret and the API key');
  throw livemodeMismatch(event.livemode);
}

/** Counts, logs and records a failed attempt (the caller rethrows). */
async function attemptFailed(err: unknown, attempt: Omit<EventAttempt, 'result'>, deps: PaymentEventPipelineDeps): Promise<void> {
  const appError = toAppError(err);
  const type = paymentEventActions.has(attempt.type) ? attempt.type : 'other';
  // A mismatch has its own metric (and error log line): checkLivemode.
  if (appError.code !== 'livemode_mismatch') count(deps, attempt.source, type, appError.status === 400 ? 'refused' : appError.status === 409 ? 'retry' : 'failed');
  if (appError.status !== 400) deps.logger.warn({ eventId: attempt.id, type: attempt.type, source: attempt.source, status: appError.status, reason: appError.message }, 'payment provider event not processed');
  // A concurrent attempt holds the event: it writes the outcome.
  if (appError.code !== 'in_progress') await logAttempt(deps, { ...attempt, result: 'failed', errorCode: appError.code, errorMessage: appError.expose ? appError.message : 'internal error' });
}

/**
 * What happens to a payment provider event however it arrived — a verified webhook delivery, an
 * event listed by the reconciliation sweep, or one an operator replays — so each is validated,
 * de-duplicated, ordered and processed exactly once the same way: livemode against the key's mode
 * (400), an unlisted type `ignored`, the object validated (400 naming the field), then processOnce.
 * Every attempt is written to the event log with its source. Resolves with the result; rejects
 * with the error that makes the provider retry (409, 502, 503) or the 400 of an invalid event.
 */
export async function runPaymentEvent(event: Envelope, source: EventSource, deps: PaymentEventPipelineDeps): Promise<PipelineResult> {
  const attempt = { id: event.id, type: event.type, created: event.created, source };
  try {
    checkLivemode(event, deps);
    const handler = paymentEventActions.get(event.type);
    if (handler === undefined) {
      count(deps, source, 'other', 'ignored');
      await logAttempt(deps, { ...attempt, result: 'ignored' });
      return 'ignored';
    }
    const work = handler.prepare(event);
    const outcome = await processOnce(deps.processing, event.id, () => work(deps), deps.processOnceOptions);
    const result = outcome.duplicate ? 'duplicate' : outcome.value;
    count(deps, source, event.type, result);
    await logAttempt(deps, { ...attempt, result });
    return result;
  } catch (err) {
    await attemptFailed(err, attempt, deps);
    throw err;
  }
}
