import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';

const uid = (): string => randomUUID().replace(/-/g, '').slice(0, 16);

/**
 * A Stripe event envelope, as Stripe sends it (API version of the library in use): the one
 * builder for the webhooks tests, the end-to-end journey and the deploy checks.
 */
export function stripeEvent(type: string, object: Record<string, unknown>, id = `evt_test_${uid()}`, created = Math.floor(Date.now() / 1000)): Record<string, unknown> {
  return {
    id,
    object: 'event',
    api_version: Stripe.API_VERSION,
    created,
    data: { object },
    livemode: false,
    pending_webhooks: 1,
    request: { id: `req_${uid()}`, idempotency_key: randomUUID() },
    type,
  };
}
