import type { PlatformEvent } from '@sp/platform';

/** Topics the service publishes to (each configurable). */
export interface Topics {
  /** PaymentConfirmedEvent. Default `Payments`. */
  payments: string;
  /** SendSmsNotificationEvent. Default `notifications`. */
  notifications: string;
  /** ProviderProductCreatedEvent. Default `ForeignProducts`. */
  foreignProducts: string;
}

export interface PaymentConfirmed {
  clientId: string;
  planId: string;
  paymentConfirmationId: string;
  planSubscriptionId: string;
  checkoutSessionId: string;
  invoiceId: string | null;
  providerCustomerId: string;
  providerSubscriptionId: string | null;
  /** Minor units of `currency`. */
  amount: number;
  currency: string;
  paidAt: string;
}

/** The CloudEvents id of the one PaymentConfirmedEvent of a checkout session. */
export const paymentConfirmedEventId = (checkoutSessionId: string): string => `PaymentConfirmedEvent:${checkoutSessionId}`;

/**
 * A checkout was paid: a PaymentConfirmation and a PlanSubscription exist. Key: the checkout
 * session id; CloudEvents id: derived from the checkout session (not from the provider event:
 * `completed` and `async_payment_succeeded` of one session are two events, one payment), so a
 * consumer dropping duplicates by id counts each payment once, also the rare event published
 * again when the service failed after publishing, before recording success.
 */
export function paymentConfirmedEvent(data: PaymentConfirmed): PlatformEvent {
  return { type: 'PaymentConfirmedEvent', key: data.checkoutSessionId, id: paymentConfirmedEventId(data.checkoutSessionId), data: { ...data } };
}

export interface ProviderProductCreated {
  planId: string;
  providerProductId: string;
  name: string;
  active: boolean;
}

/** The payment provider created the product of a platform plan (its metadata names the plan). Key: the product id. */
export function providerProductCreatedEvent(data: ProviderProductCreated, providerEventId: string): PlatformEvent {
  return { type: 'ProviderProductCreatedEvent', key: data.providerProductId, id: providerEventId, data: { ...data } };
}

export const ANNOUNCEMENT_RESOURCE_KEY = 'Announcement';

export interface AnnouncementNotification {
  phoneNumber: string;
  text: string;
  /** The subscriber's locale the text was localized to; null when the subscriber has none. */
  locale: string | null;
}

/**
 * One SMS for the notification service to deliver (the same event the authentication service
 * publishes for login codes, there with resourceKey `Otp.LoginCode` and a `code`). Key: the phone number.
 */
export function sendSmsNotificationEvent(data: AnnouncementNotification, id: string): PlatformEvent {
  return { type: 'SendSmsNotificationEvent', key: data.phoneNumber, id, data: { phoneNumber: data.phoneNumber, resourceKey: ANNOUNCEMENT_RESOURCE_KEY, text: data.text, locale: data.locale } };
}
