import Stripe from 'stripe';
import { unavailable } from '@sp/platform';
import { badGateway, invalidSignature } from './errors.js';
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
}

function connection(apiUrl: string | undefined): Pick<Stripe.StripeConfig, 'host' | 'port' | 'protocol'> {
  if (apiUrl === undefined) return {};
  const url = new URL(apiUrl);
  const protocol = url.protocol === 'http:' ? 'http' : 'https';
  return { host: url.hostname, port: url.port === '' ? (protocol === 'http' ? 80 : 443) : Number(url.port), protocol };
}

const idOf = (value: string | { id: string } | null | undefined): string | null => (value == null ? null : typeof value === 'string' ? value : value.id);

/** Network trouble and Stripe's 5xx and rate limits are worth a retry (503); other API errors are 502. */
function toAppError(err: unknown): Error {
  if (err instanceof Stripe.errors.StripeConnectionError || err instanceof Stripe.errors.StripeRateLimitError) return unavailable('payment provider', err);
  if (err instanceof Stripe.errors.StripeAPIError) return unavailable('payment provider', err);
  return badGateway('payment provider', err);
}

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
      throw toAppError(err);
    }
  };
  return {
    verifyEvent(rawBody, signatureHeader) {
      if (signatureHeader === undefined || signatureHeader === '') throw invalidSignature();
      for (const secret of options.webhookSecrets) {
        try {
          return stripe.webhooks.constructEvent(rawBody, signatureHeader, secret, SIGNATURE_TOLERANCE_SECONDS);
        } catch {
          // next secret (during a rotation the event is signed with one of them)
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
  };
}
