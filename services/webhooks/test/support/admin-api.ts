import { call, type Answer, type InstanceOptions } from './webhooks-env.js';

/** WEBHOOKS_ADMIN_API_KEY of the test instances: the current key and the previous one (a rotation). */
export const ADMIN_KEYS = ['test-admin-key-current-0123456789abcdef', 'test-admin-key-previous-fedcba9876543210'] as const;

/**
 * An instance that reads the payment provider's API through the events API stand-in at `apiUrl`
 * (which forwards every other call to stripe-mock), with the admin API on, dead letters after 3
 * failures and sweeps paging 3 events at a time; `env` adds or overrides variables.
 */
export function reconcileOptions(apiUrl: string, env: Record<string, string> = {}): InstanceOptions {
  return {
    env: { PAYMENT_PROVIDER_API_URL: apiUrl, WEBHOOKS_ADMIN_API_KEY: ADMIN_KEYS.join(','), Webhooks__DeadAfterFailures: '3', ...env },
    sweeper: { pageSize: 3 },
  };
}

/** A call to the admin API with `key` in X-Api-Key (none when null), its answer checked against openapi.yaml. */
export function adminCall(baseUrl: string, method: 'GET' | 'POST', path: string, key: string | null = ADMIN_KEYS[0]): Promise<Answer> {
  return call(baseUrl, path, { method, headers: key === null ? {} : { 'x-api-key': key } }, true);
}
