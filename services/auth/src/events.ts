import { sendSmsNotificationEvent as smsNotificationEvent, type PlatformEvent, type UserLoggedIn } from '@sp/platform';

/** The SMS a downstream notification service sends; the text comes from the resource key, localized. */
export function sendSmsNotificationEvent(fields: { phoneNumber: string; code: string; locale: string }): PlatformEvent {
  return smsNotificationEvent({ phoneNumber: fields.phoneNumber, resourceKey: 'Otp.LoginCode', code: fields.code, locale: fields.locale });
}

export type LoginFacts = UserLoggedIn;

export { userLoggedInEvent } from '@sp/platform';
