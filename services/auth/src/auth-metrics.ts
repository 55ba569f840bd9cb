import { Counter, type Registry } from 'prom-client';
import type { LimitScope } from './rate-limiter.js';

export type VerificationResult = 'success' | 'wrong_code' | 'expired' | 'reused' | 'too_many_attempts' | 'bad_request';
export type LoginMethod = 'otp' | 'oidc';
/** `rejected`: the caller's request was refused (4xx); `error`: a dependency failed (5xx). */
export type LoginResult = 'success' | 'rejected' | 'error';

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
  return {
    otpIssued: () => issued.inc(),
    otpVerification: (result) => verifications.inc({ result }),
    login: (method, result) => logins.inc({ method, result }),
    rateLimited: (scope) => limited.inc({ scope }),
  };
}
