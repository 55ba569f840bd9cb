import { describe, expect, it } from '@jest/globals';
import { GRAPH_NAME_PATTERN as NAME_PATTERN } from '@sp/graphs';
import { URL_BODY_LIMIT_BYTES } from '../src/graphs/graph-handlers.js';
import { SCHEMA_BODY_LIMIT_BYTES } from '../src/schemas/schema-handlers.js';
import { openapi, templateOf } from './support/openapi-contract.js';
import { expectValidOpenApi31, operationsOf } from '../../../test/support/openapi-contract.js';

type Operation = { security?: unknown[]; responses: Record<string, unknown>; requestBody?: Record<string, unknown> };
const operations = operationsOf<Operation>(openapi);

describe('openapi.yaml', () => {
  it('should be a valid OpenAPI 3.1 document', async () => {
    await expectValidOpenApi31(openapi);
  });

  it('should document exactly the routes the service has', () => {
    expect(operations.map(([name]) => name).sort()).toEqual([
      'DELETE /{name}',
      'DELETE /{name}/schema',
      'GET /',
      'GET /artifacts/v1/{target}/version/{versionId}/{artifact}',
      'GET /artifacts/v1/{target}/{artifact}',
      'GET /health',
      'GET /schema',
      'GET /schema/diff',
      'GET /schema/versions',
      'GET /schema/versions/{version}',
      'GET /supergraph',
      'GET /supergraph/versions',
      'GET /supergraph/versions/{version}',
      'GET /{name}',
      'GET /{name}/schema',
      'GET /{name}/schema/diff',
      'GET /{name}/schema/versions',
      'GET /{name}/schema/versions/{version}',
      'POST /schema',
      'POST /schema/rollback',
      'POST /{name}',
      'POST /{name}/schema',
      'POST /{name}/schema/rollback',
    ]);
    expect(templateOf('/orders')).toBe('/{name}');
    expect(templateOf('/schema/versions/3')).toBe('/schema/versions/{version}');
    expect(templateOf('/orders/schema/versions/2')).toBe('/{name}/schema/versions/{version}');
    expect(templateOf('/artifacts/v1/default/version/1b0c/supergraph')).toBe('/artifacts/v1/{target}/version/{versionId}/{artifact}');
    expect(templateOf('/a/b')).toBeUndefined();
  });

  const cdn = ([name]: readonly [string, Operation]): boolean => name.startsWith('GET /artifacts/');

  it.each(operations.filter((entry) => entry[0] !== 'GET /health' && !cdn(entry)))('should require the API key on %s and document 401 and 503', (_name, operation) => {
    expect(operation.security).toBeUndefined(); // the document-wide apiKey requirement applies
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['401', '503']));
  });

  it('should declare the API key scheme and leave /health open', () => {
    expect(openapi).toMatchObject({
      security: [{ apiKey: [] }],
      components: { securitySchemes: { apiKey: { type: 'apiKey', in: 'header', name: 'X-Api-Key' } } },
    });
    expect((openapi.paths['/health']!.get as Operation).security).toEqual([]);
  });

  it.each(operations.filter(cdn))('should take only the read-only CDN key on %s, answering 400 without one and 403 with a wrong one', (_name, operation) => {
    expect(openapi).toMatchObject({ components: { securitySchemes: { cdnKey: { type: 'apiKey', in: 'header', name: 'X-Hive-CDN-Key' } } } });
    expect(operation.security).toEqual([{ cdnKey: [] }]);
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['304', '400', '403', '404', '503']));
  });

  it('should state the same name pattern and body limits as the code', () => {
    expect((openapi.components.schemas.GraphName as { pattern: string }).pattern).toBe(NAME_PATTERN.source);
    expect((openapi.paths['/{name}']!.post as Operation).requestBody?.['x-max-body-bytes']).toBe(URL_BODY_LIMIT_BYTES);
    expect((openapi.paths['/schema']!.post as Operation).requestBody?.['x-max-body-bytes']).toBe(SCHEMA_BODY_LIMIT_BYTES);
    expect((openapi.paths['/{name}/schema']!.post as Operation).requestBody?.['x-max-body-bytes']).toBe(SCHEMA_BODY_LIMIT_BYTES);
  });
});
