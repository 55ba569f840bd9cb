import type { PlatformEvent } from '@sp/platform';
import type { Role } from './config.js';
import type { LoginMethod } from './auth-metrics.js';

/** The SMS a downstream notification service sends; the text comes from the resource key, localized. */
export function sendSmsNotificationEvent(fields: { phoneNumber: string; code: string; locale: string }): PlatformEvent {
  return {
    type: 'SendSmsNotificationEvent',
    key: fields.phoneNumber,
    data: { phoneNumber: fields.phoneNumber, resourceKey: 'Otp.LoginCode', code: fields.code, locale: fields.locale },
  };
}

export interface LoginFacts {
  phoneNumber: string;
  locale: string;
  userId: string;
  method: LoginMethod;
  role?: Role;
}

export function userLoggedInEvent(facts: LoginFacts): PlatformEvent {
  const data: Record<string, unknown> = { phoneNumber: facts.phoneNumber, locale: facts.locale, userId: facts.userId, method: facts.method };
  if (facts.role !== undefined) data.role = facts.role;
  return { type: 'UserLoggedInEvent', key: facts.phoneNumber, data };
}
