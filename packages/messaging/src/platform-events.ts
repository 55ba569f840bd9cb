import type { PlatformEvent } from './kafka-publisher.js';

/**
 * The events the services publish, defined once: each payload type is the message of the same
 * name in docs/asyncapi.yaml (packages/messaging/test/platform-events.test.ts checks every builder
 * against it), and every producer builds its events here.
 */
export const PLATFORM_EVENT_TYPES = ['SendSmsNotificationEvent', 'UserLoggedInEvent', 'PaymentConfirmedEvent', 'ProviderProductCreatedEvent', 'SchemaPublishedEvent'] as const;
export type PlatformEventType = (typeof PLATFORM_EVENT_TYPES)[number];

/** One SMS for the notification service: a login code, or a client's announcement already localized. */
export type SendSmsNotification =
  | { phoneNumber: string; resourceKey: 'Otp.LoginCode'; code: string; locale: string | null }
  | { phoneNumber: string; resourceKey: 'Announcement'; text: string; locale: string | null };

export interface UserLoggedIn {
  phoneNumber: string;
  locale: string;
  /** The identity provider's subject of the user. */
  userId: string;
  method: 'otp' | 'oidc';
  /** The role claimed at OTP login. */
  role?: 'client' | 'subscriber';
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

export interface ProviderProductCreated {
  planId: string;
  providerProductId: string;
  name: string;
  active: boolean;
}

function event(type: PlatformEventType, key: string, data: object, id: string | undefined): PlatformEvent {
  return id === undefined ? { type, key, data: { ...data } } : { type, key, id, data: { ...data } };
}

/** Key: the phone number. `id`: a stable CloudEvents id, when a retry may publish it again. */
export function sendSmsNotificationEvent(data: SendSmsNotification, id?: string): PlatformEvent {
  return event('SendSmsNotificationEvent', data.phoneNumber, data, id);
}

/** Key: the phone number. */
export function userLoggedInEvent(data: UserLoggedIn): PlatformEvent {
  return event('UserLoggedInEvent', data.phoneNumber, data, undefined);
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
  return event('PaymentConfirmedEvent', data.checkoutSessionId, data, paymentConfirmedEventId(data.checkoutSessionId));
}

/** The payment provider created the product of a platform plan (its metadata names the plan). Key: the product id. */
export function providerProductCreatedEvent(data: ProviderProductCreated, providerEventId: string): PlatformEvent {
  return event('ProviderProductCreatedEvent', data.providerProductId, data, providerEventId);
}
