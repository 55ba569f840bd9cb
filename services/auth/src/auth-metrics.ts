import { Counter, type Registry } from 'prom-client';
import type { LimitScope } from './rate-limiter.js';

const VERIFICATION_RESULTS = ['success', 'wrong_code', 'expired', 'reused', 'too_many_attempts', 'bad_request'] as const;
export type VerificationResult = (typeof VERIFICATION_RESULTS)[number];
const LOGIN_METHODS = ['otp', 'oidc'] as const;
export type LoginMethod = (typeof LOGIN_METHODS)[number];
/** `rejected`: the caller's request was refused (4xx); `error`: a dependency failed (5xx). */
const LOGIN_RESULTS = ['success', 'rejected', 'error'] as const;
export type LoginResult = (typeof LOGIN_RESULTS)[number];
const LIMIT_SCOPES: readonly LimitScope[] = ['phone_cooldown', 'phone', 'ip'];

export interface AuthMetrics {
  otpIssued(): void;
  otpVerification(result: VerificationResult): void;
  login(method: LoginMethod, result: LoginResult): void;
  rateLimited(scope: LimitScope): void;
}

/** The service's own counters (HTTP RED metrics come from the platform's Koa app). */
export function createAuthMetrics(registry: Registry): AuthMetrics {
  const registers = [registry];
  const issued = new Counter({ name: 'otp_issued_total', help: 'One-time passwords issued and sent', registers });
  const verifications = new Counter({ name: 'otp_verifications_total', help: 'POST /otp/verify outcomes', labelNames: ['result'], registers });
  const logins = new Counter({ name: 'logins_total', help: 'Logins by method and outcome', labelNames: ['method', 'result'], registers });
  const limited = new Counter({ name: 'rate_limited_total', help: 'OTP requests refused by a resend limit', labelNames: ['scope'], registers });
  // Every known outcome at 0 from the start: panels show 0 rather than "No data", and increase()
  // sees the first refusal or failure.
  for (const result of VERIFICATION_RESULTS) verifications.inc({ result }, 0);
  for (const method of LOGIN_METHODS) for (const result of LOGIN_RESULTS) logins.inc({ method, result }, 0);
  for (const scope of LIMIT_SCOPES) limited.inc({ scope }, 0);
  return {
    otpIssued: () => issued.inc(),
    otpVerification: (result) => verifications.inc({ result }),
    login: (method, result) => logins.inc({ method, result }),
    rateLimited: (scope) => limited.inc({ scope }),
  };
}
