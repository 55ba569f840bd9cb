import { fileURLToPath } from 'node:url';
import { headerValues, loadOpenApiContract } from '../../../../test/support/openapi-contract.js';
import type { Reply } from './https-client.js';

export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

const contract = loadOpenApiContract<Reply>(openapiPath, {
  id: 'urn:auth:openapi',
  // Six fixed paths, no parameters: the default templateOf (a path is its own template) fits.
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
