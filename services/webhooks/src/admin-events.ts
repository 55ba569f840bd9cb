import type Koa from 'koa';
import type { RouterMiddleware } from '@koa/router';
import { badGateway, badRequest, notFound, toAppError } from '@sp/core';
import { decodeLogCursor } from './events/event-log-cursor.js';
import { EVENT_OUTCOMES, type EventLog, type EventLogQuery, type EventOutcome, type EventRecord } from './events/event-log.js';
import { parseEnvelope } from './payments/event-schemas.js';
import { runPaymentEvent, type PaymentEventPipelineDeps } from './payments/payment-event-pipeline.js';

export const ADMIN_EVENTS_PATH = '/api/events';
const MAX_LIMIT = 100;
const DEFAULT_LIMIT = 20;

/** An event log record as the admin API shows it: Stripe's `created` in Unix seconds, the service's times in ISO 8601. */
export function eventView(record: EventRecord): Record<string, unknown> {
  return { ...record, firstSeen: new Date(record.firstSeen).toISOString(), lastSeen: new Date(record.lastSeen).toISOString() };
}

const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value[0] : value);

/** `since`: an ISO 8601 time or Unix milliseconds. */
function parseSince(value: string): number {
  const time = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(time)) throw badRequest('since: expected an ISO 8601 time or Unix milliseconds');
  return time;
}

function parseOutcome(value: string | undefined): EventOutcome | undefined {
  if (value !== undefined && !EVENT_OUTCOMES.includes(value as EventOutcome)) throw badRequest(`outcome: expected one of ${EVENT_OUTCOMES.join(', ')}`);
  return value as EventOutcome | undefined;
}

function parseLimit(value: string | undefined): number {
  const limit = value === undefined ? DEFAULT_LIMIT : Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) throw badRequest(`limit: expected an integer from 1 to ${MAX_LIMIT}`);
  return limit;
}

function parseQuery(query: Koa.Context['query']): EventLogQuery {
  const outcome = parseOutcome(single(query.outcome));
  const type = single(query.type);
  const since = single(query.since);
  const cursor = single(query.cursor);
  if (cursor !== undefined) decodeLogCursor(cursor); // 400 now rather than from the store
  return {
    limit: parseLimit(single(query.limit)),
    ...(outcome === undefined ? {} : { outcome }),
    ...(type === undefined || type === '' ? {} : { type }),
    ...(since === undefined ? {} : { since: parseSince(since) }),
    ...(cursor === undefined ? {} : { cursor }),
  };
}

/** GET /api/events: the event log, newest first seen first, filtered, one page (`next` names the following one). */
export function listEvents(eventLog: EventLog): RouterMiddleware {
  return async (ctx) => {
    const page = await eventLog.list(parseQuery(ctx.query));
    ctx.body = { events: page.events.map(eventView), ...(page.next === undefined ? {} : { next: page.next }) };
  };
}

/** GET /api/events/{id}: one event's record; 404 when the log has none (never seen, or past the retention). */
export function getEvent(eventLog: EventLog): RouterMiddleware {
  return async (ctx) => {
    const record = await eventLog.get(ctx.params.id ?? '');
    if (record === null) throw notFound('no such event in the event log');
    ctx.body = eventView(record);
  };
}

/**
 * POST /api/events/{id}/replay: the event as the payment provider has it (`GET /v1/events/{id}`;
 * 404 when it has none, Stripe keeps events 30 days) run through the pipeline as a delivery, so
 * exactly once holds: a processed event answers `duplicate` and changes nothing. 200 with the
 * result and the record; a failure answers its error (409 still not synchronized, 502, 503) and is
 * in the record.
 */
export function replayEvent(deps: PaymentEventPipelineDeps): RouterMiddleware {
  return async (ctx) => {
    const id = ctx.params.id ?? '';
    const raw = await deps.paymentProvider.retrieveEvent(id);
    if (raw === null) throw notFound('no such event at the payment provider');
    let event;
    try {
      event = parseEnvelope(raw);
    } catch (err) {
      throw badGateway('payment provider', toAppError(err));
    }
    const result = await runPaymentEvent(event, 'replay', deps);
    const record = await deps.eventLog.get(id);
    ctx.body = { result, ...(record === null ? {} : { event: eventView(record) }) };
  };
}
