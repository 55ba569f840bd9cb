import { describe, expect, it } from '@jest/globals';
import { asyncapiMessages, expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import {
  paymentConfirmedEvent,
  PLATFORM_EVENT_TYPES,
  providerProductCreatedEvent,
  sendSmsNotificationEvent,
  userLoggedInEvent,
  type PlatformEventType,
} from '../src/platform-events.js';
import type { PlatformEvent } from '../src/kafka-publisher.js';
import { schemaPublishedEvent } from '@sp/graphs';

const payment = {
  clientId: 'client-1',
  planId: 'plan-1',
  paymentConfirmationId: 'payment-1',
  planSubscriptionId: 'subscription-1',
  checkoutSessionId: 'cs_test_1',
  invoiceId: null,
  providerCustomerId: 'cus_1',
  providerSubscriptionId: 'sub_1',
  amount: 1999,
  currency: 'usd',
  paidAt: '2026-11-23T23:00:00.000Z',
};

const built: [string, PlatformEvent, string][] = [
  ['a login code SMS', sendSmsNotificationEvent({ phoneNumber: '+15551234567', resourceKey: 'Otp.LoginCode', code: '123456', locale: 'de' }), '+15551234567'],
  ['an announcement SMS to a subscriber without locale', sendSmsNotificationEvent({ phoneNumber: '+15557654321', resourceKey: 'Announcement', text: 'Open today', locale: null }, 'SM1:+15557654321'), '+15557654321'],
  ['an OTP login with its role', userLoggedInEvent({ phoneNumber: '+15551234567', locale: 'en', userId: 'u-1', method: 'otp', role: 'client' }), '+15551234567'],
  ['an OIDC login', userLoggedInEvent({ phoneNumber: '+15551234567', locale: 'en', userId: 'u-1', method: 'oidc' }), '+15551234567'],
  ['a payment', paymentConfirmedEvent(payment), 'cs_test_1'],
  ['a provider product', providerProductCreatedEvent({ planId: 'plan-1', providerProductId: 'prod_1', name: 'Gold', active: true }, 'evt_1'), 'prod_1'],
  [
    'a schema version',
    schemaPublishedEvent({ version: 3, sha256: 'a'.repeat(64), previousVersion: 2, rollbackOf: null, publishedAt: '2026-11-25T22:00:00.000Z', publisher: 'key:0123456789abcdef', changes: { breaking: 1, dangerous: 0, safe: 2 } }),
    'graph:schema',
  ],
];

describe('platform events', () => {
  it('should define exactly the messages of docs/asyncapi.yaml', () => {
    expect([...PLATFORM_EVENT_TYPES].sort()).toEqual(asyncapiMessages().sort());
  });

  it.each(built)('should build %s as a valid payload of its AsyncAPI message, keyed as documented', (_name, event, key) => {
    expectEventPayload(event.type as PlatformEventType, event.data);
    expect(event.key).toBe(key);
  });

  it('should give every delivery of one checkout session the same CloudEvents id', () => {
    expect(paymentConfirmedEvent(payment).id).toBe(paymentConfirmedEvent({ ...payment, paidAt: '2026-11-24T00:00:00.000Z' }).id);
  });

  it('should copy the payload, so a later change of the caller\'s object does not alter a built event', () => {
    const data = { planId: 'plan-1', providerProductId: 'prod_1', name: 'Gold', active: true };
    const event = providerProductCreatedEvent(data, 'evt_1');
    data.name = 'Silver';
    expect(event.data.name).toBe('Gold');
  });
});
