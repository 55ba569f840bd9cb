import { assertDocumented } from './openapi-contract.js';
import type { Answer, InstanceOptions } from './webhooks-env.js';

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
export async function adminCall(baseUrl: string, method: 'GET' | 'POST', path: string, key: string | null = ADMIN_KEYS[0]): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, { method, headers: key === null ? {} : { 'x-api-key': key }, signal: AbortSignal.timeout(20_000) });
  const text = await response.text();
  const answer: Answer = {
    status: response.status,
    headers: response.headers,
    text,
    json: response.headers.get('content-type')?.startsWith('application/json') ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
  assertDocumented(method, path, answer);
  return answer;
}
