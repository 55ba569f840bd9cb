import type { PriceObject, ProductObject } from './event-schemas.js';

/** What the service needs of a checkout session, read from the provider's API. */
export interface CheckoutSessionDetails {
  id: string;
  customerId: string | null;
  invoiceId: string | null;
  subscriptionId: string | null;
  /** `paid`, `unpaid` or `no_payment_required`. */
  paymentStatus: string;
  amountTotal: number | null;
  currency: string | null;
  /** Products of the session's line items, in order. */
  productIds: string[];
}

export interface InvoiceDetails {
  id: string;
  customerId: string | null;
  /** Total in the currency's minor unit. */
  total: number;
  currency: string;
}

/** A page of `GET /v1/events`, newest first. */
export interface EventPage {
  /** The events as the API answers them (not yet validated: see event-schemas.ts). */
  events: unknown[];
  hasMore: boolean;
}

export interface ListEventsQuery {
  /** Events created at or after this Unix second. */
  createdGte: number;
  types: readonly string[];
  /** The id of the last event of the previous page. */
  startingAfter?: string;
  limit: number;
}

/**
 * The payment provider (Stripe; adapter stripe-payment-provider.ts): verification of webhook
 * signatures and the API reads the checkout flow and the ordering of changes need. API failures
 * reject with a 5xx AppError.
 */
export interface PaymentProvider {
  /**
   * The parsed JSON body when `signatureHeader` verifies with one of the secrets (not yet
   * validated: see event-schemas.ts); a 400 `invalid signature` when it does not, a 400
   * `malformed event` when a signed body is not JSON.
   */
  verifyEvent(rawBody: Buffer, signatureHeader: string | undefined): unknown;
  retrieveCheckoutSession(id: string): Promise<CheckoutSessionDetails>;
  retrieveInvoice(id: string): Promise<InvoiceDetails>;
  /** The product as the provider has it now; null when it was deleted. */
  retrieveProduct(id: string): Promise<ProductObject | null>;
  /** The price as the provider has it now; null when it was deleted. */
  retrievePrice(id: string): Promise<PriceObject | null>;
  /** One page of the events the provider lists (Stripe keeps them 30 days). */
  listEvents(query: ListEventsQuery): Promise<EventPage>;
  /** One event as the provider has it; null when it knows no such event. */
  retrieveEvent(id: string): Promise<unknown>;
}
