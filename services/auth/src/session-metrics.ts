import { Counter, type Registry } from 'prom-client';

/** `renewed`: new tokens; `refused`: Keycloak refused the refresh token (session ended); `failed`: Keycloak or the cache service failed. */
export type RenewalResult = 'renewed' | 'refused' | 'failed';

/** Counts the refresh grants of session renewal (one per session at a time across replicas). */
export function createSessionMetrics(registry: Registry): (result: RenewalResult) => void {
  const renewals = new Counter({ name: 'session_renewals_total', help: 'Access-token renewals by GET /auth, by outcome', labelNames: ['result'], registers: [registry] });
  return (result) => renewals.inc({ result });
}
