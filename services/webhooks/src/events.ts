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

/**
 * A checkout was paid: a PaymentConfirmation and a PlanSubscription exist. Key: the checkout
 * session id; CloudEvents id: the payment provider's event id, so a consumer can drop the rare
 * duplicate (published again when the service failed after publishing, before recording success).
 */
export function paymentConfirmedEvent(data: PaymentConfirmed, providerEventId: string): PlatformEvent {
  return { type: 'PaymentConfirmedEvent', key: data.checkoutSessionId, id: providerEventId, data: { ...data } };
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
