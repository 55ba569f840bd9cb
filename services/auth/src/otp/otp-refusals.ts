import { AppError } from '@sp/core';

/**
 * Why POST /otp sent no code: the stable `reason` of its answer, listed in openapi.yaml and the
 * README. Callers may branch on it; the message beside it is for people and may change.
 */
export type OtpRefusalReason =
  | 'resend_cooldown'
  | 'phone_limit'
  | 'ip_limit'
  | 'prefix_limit'
  | 'sms_budget_exhausted'
  | 'country_not_allowed'
  | 'number_type_not_allowed';

/**
 * Status and message of each refusal. Limits are 429 (the caller's own traffic); the platform-wide
 * budget is 503 (nothing the caller did); the policies are 403 (this country) and 422 (this kind
 * of number), where waiting does not help, so they carry no Retry-After.
 */
const ANSWERS: Readonly<Record<OtpRefusalReason, { status: number; message: string }>> = {
  resend_cooldown: { status: 429, message: 'a code was just sent to this number; wait before requesting another' },
  phone_limit: { status: 429, message: 'too many codes were sent to this number; try again later' },
  ip_limit: { status: 429, message: 'too many codes were requested from this address; try again later' },
  prefix_limit: { status: 429, message: 'too many codes were sent to numbers of this range; try again later' },
  sms_budget_exhausted: { status: 503, message: 'codes cannot be sent right now; try again later' },
  country_not_allowed: { status: 403, message: 'codes are not sent to phone numbers of this country' },
  number_type_not_allowed: { status: 422, message: 'codes are sent only to numbers that can receive SMS, such as mobile numbers' },
};

export const OTP_REFUSAL_REASONS = Object.keys(ANSWERS) as OtpRefusalReason[];

/** The answer to a refused POST /otp; Retry-After (whole seconds, at least 1) when a wait helps. */
export function otpRefusal(reason: OtpRefusalReason, retryAfterSeconds?: number): AppError {
  const { status, message } = ANSWERS[reason];
  const headers: Record<string, string> = retryAfterSeconds === undefined ? {} : { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) };
  return new AppError(status, reason, message, { reason, headers });
}

/** The refusal reason an error carries, if it is one of POST /otp's refusals. */
export function otpRefusalReason(err: unknown): OtpRefusalReason | undefined {
  return err instanceof AppError && err.reason !== undefined && err.reason in ANSWERS ? (err.reason as OtpRefusalReason) : undefined;
}
