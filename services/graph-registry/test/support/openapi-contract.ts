import { fileURLToPath } from 'node:url';
import { loadOpenApiContract } from '../../../../test/support/openapi-contract.js';
import type { HttpResponse } from './http-client.js';

/** The document under test, as parsed from services/graph-registry/openapi.yaml. */
export const openapiPath = fileURLToPath(new URL('../../openapi.yaml', import.meta.url));

/** The path template a request path falls under, as this API routes it (undefined: no such path). */
export function templateOf(path: string): string | undefined {
  const pathname = path.split('?')[0]!.replace(/(.)\/$/, '$1');
  if (['/', '/health', '/schema', '/schema/versions', '/schema/diff', '/schema/rollback', '/supergraph', '/supergraph/versions'].includes(pathname)) return pathname;
  if (/^\/schema\/versions\/[^/]+$/.test(pathname)) return '/schema/versions/{version}';
  if (/^\/supergraph\/versions\/[^/]+$/.test(pathname)) return '/supergraph/versions/{version}';
  if (/^\/artifacts\/v1\/[^/]+\/version\/[^/]+\/[^/]+$/.test(pathname)) return '/artifacts/v1/{target}/version/{versionId}/{artifact}';
  if (/^\/artifacts\/v1\/[^/]+\/[^/]+$/.test(pathname)) return '/artifacts/v1/{target}/{artifact}';
  const subgraph = /^\/[^/]+(\/schema(?:\/versions(?:\/[^/]+)?|\/diff|\/rollback)?)$/.exec(pathname);
  if (subgraph) return `/{name}${subgraph[1]!.replace(/\/versions\/[^/]+$/, '/versions/{version}')}`;
  return /^\/[^/]+$/.test(pathname) ? '/{name}' : undefined;
}

const contract = loadOpenApiContract<HttpResponse>(openapiPath, {
  id: 'urn:graph-registry:openapi',
  templateOf,
  // Methods a path does not list are answered with the documented 401 or 405 responses, paths the
  // API does not have with 401 or 404; /health, the one path without the API key, never with 401.
  undocumented: (template) => {
    if (template === '/health') return { 405: 'MethodNotAllowed' };
    return template === undefined ? { 401: 'Unauthorized', 404: 'NotFound' } : { 401: 'Unauthorized', 405: 'MethodNotAllowed' };
  },
  view: (res) => ({
    status: res.status,
    text: res.text,
    header: (name) => {
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) return [];
      return Array.isArray(value) ? value : [value];
    },
    json: () => res.json,
  }),
});

export const openapi = contract.document;

/**
 * Fails unless the response is one that openapi.yaml documents for this method and path: the
 * status is listed, required headers are present and the body validates against the schema of
 * its content type (no body where none is documented, and never one for HEAD).
 */
export const assertDocumented = contract.assertDocumented;
