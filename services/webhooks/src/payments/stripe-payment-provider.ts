import Stripe from 'stripe';
import { unavailable } from '@sp/core';
import type { z } from 'zod';
import { badGateway } from '@sp/core';
import { invalidSignature, malformedEvent } from '../errors.js';
import { priceSchema, productSchema } from './event-schemas.js';
import type { CheckoutSessionDetails, InvoiceDetails, PaymentProvider } from './payment-provider.js';

/** Stripe's own recommendation, and what the design fixes: a signature older than 5 minutes is refused. */
export const SIGNATURE_TOLERANCE_SECONDS = 300;

export interface StripePaymentProviderOptions {
  apiKey: string;
  /** PAYMENT_PROVIDER_API_URL; Stripe's API when undefined. */
  apiUrl?: string;
  webhookSecrets: readonly string[];
  timeoutMs?: number;
  /** Extra attempts of an API call after a network error or a 5xx (Stripe's client retries idempotent reads). */
  maxNetworkRetries?: number;
  /** The clock, Unix ms, a signature's age is measured on; Date.now unless given. */
  now?: () => number;
}

function connection(apiUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (apiUrl === undefined) return {};
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port), protocol };
}

const idOf = (value: string | { id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

/** Network trouble and Stripe's 5xx and rate limits are worth a retry (503); other API errors are 502. */
function fromStripeError(err: unknown): Error {
  if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeRateLimitError) return unavailable('payment provider', err);
  if (err instanceof Stripe.errors.StripeAPIError) return unavailable('payment provider', err);
  return badGateway('payment provider', err);
}

/** An object the provider answers, in the shape the service reads (502 when it is not); null for a deleted one. */
function current<T>(schema: z.ZodType<T>, answer: unknown): T | null {
  if ((answer as { deleted?: unknown }).deleted === true) return null;
  const parsed = schema.safeParse(answer);
  if (!parsed.success) throw badGateway('payment provider', parsed.error);
  return parsed.data;
}

const isNotFound = (err: unknown): boolean => err instanceof Stripe.errors.StripeInvalidRequestError && err.statusCode === 404;

function sessionDetails(session: Stripe.Checkout.Session): CheckoutSessionDetails {
  const productIds = (session.line_items?.data ?? [])
    .map((item) => idOf(item.price?.product as string | { id: string } | null | undefined))
    .filter((id): id is string => id !== null);
  return {
    id: session.id,
    customerId: idOf(session.customer),
    invoiceId: idOf(session.invoice),
    subscriptionId: idOf(session.subscription),
    paymentStatus: session.payment_status,
    amountTotal: session.amount_total,
    currency: session.currency,
    productIds,
  };
}

/** The payment provider on Stripe's API (or stripe-mock, which speaks the same), with the official library. */
export function createStripePaymentProvider(options: StripePaymentProviderOptions): PaymentProvider {
  const { now = Date.now } = options;
  const stripe = new Stripe(options.apiKey, {
    ...connection(options.apiUrl),
    timeout: options.timeoutMs ?? 10_000,
    maxNetworkRetries: options.maxNetworkRetries ?? 1,
    telemetry: false,
  });
  const call = async <T>(request: () => Promise<T>): Promise<T> => {
    try {
      return await request();
    } catch (err) {
      throw fromStripeError(err);
    }
  };
  /** A retrieve whose 404 means the object was deleted. */
  const retrieve = async <T>(schema: z.ZodType<T>, request: () => Promise<unknown>): Promise<T | null> => {
    try {
      return current(schema, await request());
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err instanceof Stripe.errors.StripeError ? fromStripeError(err) : err;
    }
  };
  return {
    verifyEvent(rawBody, signatureHeader) {
      if (signatureHeader === undefined || signatureHeader === '') throw invalidSignature();
      for (const secret of options.webhookSecrets) {
        try {
          return stripe.webhooks.constructEvent(rawBody, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS, undefined, now());
        } catch (err) {
          // The signature verified but the body is no event (not JSON, or a thin event): the sender's fault.
          if (!(err instanceof Stripe.errors.StripeSignatureVerificationError)) throw malformedEvent('body is not a JSON event');
          // else the next secret (during a rotation the event is signed with one of them)
        }
      }
      throw invalidSignature();
    },
    async retrieveCheckoutSession(id) {
      return sessionDetails(await call(() => stripe.checkout.sessions.retrieve(id, { expand: ['line_items'] })));
    },
    async retrieveInvoice(id): Promise<InvoiceDetails> {
      const invoice = await call(() => stripe.invoices.retrieve(id));
      return { id: invoice.id, customerId: idOf(invoice.customer), total: invoice.total, currency: invoice.currency };
    },
    retrieveProduct: (id) => retrieve(productSchema, () => stripe.products.retrieve(id)),
    retrievePrice: (id) => retrieve(priceSchema, () => stripe.prices.retrieve(id)),
    async listEvents(query) {
      const page = await call(() =>
        stripe.events.list({
          created: { gte: query.createdGte },
          types: [...query.types],
          limit: query.limit,
          ...(query.startingAfter === undefined ? {} : { starting_after: query.startingAfter }),
        }),
      );
      return { events: page.data, hasMore: page.has_more };
    },
    async retrieveEvent(id) {
      try {
        return await stripe.events.retrieve(id);
      } catch (err) {
        if (isNotFound(err)) return null;
        throw fromStripeError(err);
      }
    },
  };
}
