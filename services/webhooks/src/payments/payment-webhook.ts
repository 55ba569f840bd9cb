import type Koa from 'koa';
import { toAppError } from '@sp/core';
import { jsonShape, readBody } from '@sp/http';
import { malformedEvent } from '../errors.js';
import { parseEnvelope, type Envelope } from './event-schemas.js';
import { runPaymentEvent, type PaymentEventPipelineDeps } from './payment-event-pipeline.js';

/** Stripe's events are a few KiB; 256 KiB leaves room for large line item lists and metadata. */
export const PAYMENT_BODY_LIMIT_BYTES = 256 * 1024;
/**
 * Stripe's events nest about 8 levels (an invoice's line's price's recurring settings). Parsing
 * costs more than linear time in the nesting (256 KiB nested 128k deep: ~200 ms of event loop, in
 * which every other request waits), so deeper bodies are refused before anything parses them.
 */
export const PAYMENT_BODY_MAX_DEPTH = 64;
/**
 * Commas and colons (about two per field or element): parsing cost grows with them, and a 256 KiB
 * body can hold 40,000 fields (tens of ms of event loop). Stripe's objects have a few hundred (an
 * invoice with one line: ~320, a checkout session with its line items: ~340); 8,000 (about 4,000
 * fields) leaves room for lists of ten items and bounds the parse to a few ms.
 */
export const PAYMENT_BODY_MAX_SEPARATORS = 8_000;

/** A body built unlike any event (too deep, too many fields) is refused before anything parses it. */
function checkShape(rawBody: Buffer, deps: PaymentWebhookDeps): void {
  const shape = jsonShape(rawBody, { depth: PAYMENT_BODY_MAX_DEPTH + 1, separators: PAYMENT_BODY_MAX_SEPARATORS + 1 });
  const problem =
    shape.depth > PAYMENT_BODY_MAX_DEPTH
      ? `nested deeper than ${PAYMENT_BODY_MAX_DEPTH} levels`
      : shape.separators > PAYMENT_BODY_MAX_SEPARATORS
        ? `more than ${PAYMENT_BODY_MAX_SEPARATORS} commas and colons (about ${PAYMENT_BODY_MAX_SEPARATORS / 2} fields)`
        : undefined;
  if (problem === undefined) return;
  deps.metrics.event('stripe', 'other', 'refused');
  throw malformedEvent(problem);
}

export type PaymentWebhookDeps = PaymentEventPipelineDeps;

/**
 * The signed body as an event envelope: 400 `invalid signature`, or 400 `malformed event` naming
 * the field (nothing is done with such an event).
 */
function verifiedEnvelope(ctx: Koa.Context, rawBody: Buffer, deps: PaymentWebhookDeps): Envelope {
  let body: unknown;
  try {
    body = deps.paymentProvider.verifyEvent(rawBody, ctx.get('stripe-signature'));
  } catch (err) {
    if (toAppError(err).code === 'invalid_signature') deps.metrics.signatureFailure('stripe');
    throw err;
  }
  let envelope: Envelope;
  try {
    envelope = parseEnvelope(body);
  } catch (err) {
    deps.metrics.event('stripe', 'other', 'refused');
    throw err;
  }
  return envelope;
}

/**
 * POST /api/PaymentProviderWebhookHandler (after the `code` check). Order: media type (415),
 * size (413), shape (400: nesting and field count, before anything parses it), signature over the raw body (400), the envelope (`id`, `type`, `created`,
 * `livemode`, `data.object`: 400 naming the field), then the pipeline every event goes through
 * (runPaymentEvent: livemode, type, object, processOnce, the event log) answering 200 `processed`,
 * `deferred`, `duplicate`, `stale` or `ignored`, or the error that makes the provider retry (409, 502, 503).
 */
export function paymentProviderWebhook(deps: PaymentWebhookDeps): Koa.Middleware {
  return async (ctx) => {
    const rawBody = await readBody(ctx, { limitBytes: PAYMENT_BODY_LIMIT_BYTES, types: ['application/json'] });
    checkShape(rawBody, deps);
    const event = verifiedEnvelope(ctx, rawBody, deps);
    ctx.body = { received: true, result: await runPaymentEvent(event, 'webhook', deps) };
  };
}
