import { fileURLToPath } from 'node:url';
import { headerValues, loadOpenApiContract } from '../../../../test/support/openapi-contract.js';

/** The document under test, parsed from services/webhooks/openapi.yaml. */
export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

export interface DocumentedResponse {
  status: number;
  headers: Headers;
  text: string;
}

const contract = loadOpenApiContract<DocumentedResponse>(openapiPath, {
  id: 'urn:webhooks:openapi',
  // The two webhook paths and the admin API's; no fallback: only their operations are checked.
  templateOf: (path) => {
    const pathname = path.split('?')[0]!;
    if (/^\/api\/events\/[^/]+\/replay$/.test(pathname)) return '/api/events/{id}/replay';
    if (/^\/api\/events\/[^/]+$/.test(pathname)) return '/api/events/{id}';
    if (pathname === '/api/events') return pathname;
    // The router serves the webhook routes with a trailing slash and in any letter case too.
    return ['/api/PaymentProviderWebhookHandler', '/api/SmsProviderWebhookHandler'].find((route) => route.toLowerCase() === pathname.replace(/\/$/, '').toLowerCase());
  },
  view: (res) => ({
    status: res.status,
    text: res.text,
    header: (name) => headerValues(res.headers, name),
    json: () => JSON.parse(res.text) as unknown,
  }),
});

export const openapi = contract.document;

/**
 * Fails unless openapi.yaml documents this answer for the method and path: the status is listed,
 * required headers are present, and the body matches the schema of its content type.
 */
export const assertDocumented = contract.assertDocumented;
