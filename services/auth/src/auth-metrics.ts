import { Counter, type Registry } from 'prom-client';
import { counterFromZero } from '@sp/observability';
import { OTP_REFUSAL_REASONS, type OtpRefusalReason } from './otp/otp-refusals.js';

const VERIFICATION_RESULTS = ['success', 'wrong_code', 'expired', 'reused', 'too_many_attempts', 'bad_request'] as const;
export type VerificationResult = (typeof VERIFICATION_RESULTS)[number];
const LOGIN_METHODS = ['otp', 'oidc'] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];
/** `rejected`: the caller's request was refused (4xx); `error`: a dependency failed (5xx). */
const LOGIN_RESULTS = ['success', 'rejected', 'error'] as const;
export type LoginResult = (typeof LOGIN_RESULTS)[number];

export interface AuthMetrics {
  otpVerification(result: VerificationResult): void;
  login(method: LoginMethod, result: LoginResult): void;
  // OTP fraud signals (issue #32): per country, and every refusal by its reason.
  /** A code was sent (its SMS event published) to a number of `country`: otp_issued_total and the per-country counters. */
  otpSent(country: string, monitored: boolean): void;
  /** A code sent to a number of `country` was entered right (before the login's own steps). */
  otpVerified(country: string): void;
  otpRefused(reason: OtpRefusalReason): void;
}

/** rate_limited_total's scope of each limit's refusal (the label it had before the fraud controls). */
const LIMIT_SCOPES: Partial<Record<OtpRefusalReason, string>> = {
  resend_cooldown: 'phone_cooldown',
  phone_limit: 'phone',
  ip_limit: 'ip',
  prefix_limit: 'prefix',
  sms_budget_exhausted: 'budget',
};

/** The service's own counters (HTTP RED metrics come from the platform's Koa app). */
export function createAuthMetrics(registry: Registry): AuthMetrics {
  const registers = [registry];
  const issued = new Counter({ name: 'otp_issued_total', help: 'One-time passwords issued and sent', registers });
  // Every known outcome at 0 from the start: panels show 0 rather than "No data", and increase()
  // sees the first refusal or failure.
  const verifications = counterFromZero(registry, { name: 'otp_verifications_total', help: 'POST /otp/verify outcomes', labels: { result: VERIFICATION_RESULTS } });
  const logins = counterFromZero(registry, { name: 'logins_total', help: 'Logins by method and outcome', labels: { method: LOGIN_METHODS, result: LOGIN_RESULTS } });
  const limited = counterFromZero(registry, { name: 'rate_limited_total', help: 'OTP requests refused by a resend limit or the SMS budget', labels: { scope: Object.values(LIMIT_SCOPES) } });
  const sent = new Counter({ name: 'auth_otp_sent_total', help: 'Codes sent, by the country of the number (ISO 3166-1 alpha-2; 001: no country)', labelNames: ['country'], registers });
  const verified = new Counter({ name: 'auth_otp_verified_total', help: 'Codes entered right, by the country of the number', labelNames: ['country'], registers });
  const monitoredSent = new Counter({ name: 'auth_otp_monitored_total', help: 'Codes sent to numbers of a monitored country (Otp__MonitoredCountries)', labelNames: ['country'], registers });
  const refused = counterFromZero(registry, { name: 'auth_otp_refused_total', help: 'POST /otp refusals by reason (the reason of the answer)', labels: { reason: OTP_REFUSAL_REASONS } });
  return {
    otpVerification: (result) => verifications.inc({ result }),
    login: (method, result) => logins.inc({ method, result }),
    otpSent: (country, monitored) => {
      issued.inc();
      sent.inc({ country });
      if (monitored) monitoredSent.inc({ country });
    },
    otpVerified: (country) => verified.inc({ country }),
    otpRefused: (reason) => {
      refused.inc({ reason });
      const scope = LIMIT_SCOPES[reason];
      if (scope !== undefined) limited.inc({ scope });
    },
  };
}
