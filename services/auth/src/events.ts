import { sendSmsNotificationEvent, type PlatformEvent, type UserLoggedIn } from '@sp/messaging';

/**
 * The SendSmsNotificationEvent that carries a login code: a downstream notification service sends
 * the text of the resource key `Otp.LoginCode`, localized, with the code in it.
 */
export function loginCodeSmsEvent(fields: { phoneNumber: string; code: string; locale: string }): PlatformEvent {
  return sendSmsNotificationEvent({ phoneNumber: fields.phoneNumber, resourceKey: 'Otp.LoginCode', code: fields.code, locale: fields.locale });
}

/** What a UserLoggedInEvent states about a login. */
export type LoginFacts = UserLoggedIn;
