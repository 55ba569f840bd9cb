import type Stripe from 'stripe';

/** A verified payment provider event (Stripe's event shape: `id`, `type`, `created`, `data.object`). */
export type ProviderEvent = Stripe.Event;

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

/**
 * The payment provider (Stripe; adapter stripe-payment-provider.ts): verification of webhook
 * signatures and the API reads the checkout flow needs. API failures reject with a 5xx AppError.
 */
export interface PaymentProvider {
  /** The event in `rawBody` when `signatureHeader` verifies with one of the secrets; else throws a 400. */
  verifyEvent(rawBody: Buffer, signatureHeader: string | undefined): ProviderEvent;
  retrieveCheckoutSession(id: string): Promise<CheckoutSessionDetails>;
  retrieveInvoice(id: string): Promise<InvoiceDetails>;
}
