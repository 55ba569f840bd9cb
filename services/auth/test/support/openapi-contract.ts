import { fileURLToPath } from 'node:url';
import { headerValues, loadOpenApiContract, type OpenApiContract } from '../../../../test/support/openapi-contract.js';
import type { Reply } from './https-client.js';

export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

const contract: OpenApiContract<Reply> = loadOpenApiContract<Reply>(openapiPath, {
  id: 'urn:auth:openapi',
  // Fixed paths are their own template; one path has a parameter.
  templateOf: (path): string | undefined => {
    const pathname = path.split('?')[0]!;
    if (/^\/sessions\/[^/]+$/.test(pathname)) return '/sessions/{id}';
    return Object.hasOwn(contract.document.paths, pathname) ? pathname : undefined;
  },
  undocumented: (template) => (template === undefined ? { 404: 'NotFound' } : { 405: 'MethodNotAllowed' }),
  view: (reply) => ({
    status: reply.status,
    text: reply.text,
    header: (name) => (name.toLowerCase() === 'set-cookie' ? reply.cookies : headerValues(reply.headers, name)),
    json: () => reply.json(),
  }),
});

export const openapi = contract.document;

/**
 * Fails unless openapi.yaml documents this answer for the method and path: the status is listed,
 * required headers are present (and match their schema where one is named), and the body
 * validates against the schema of its content type.
 */
export const assertDocumented = contract.assertDocumented;
