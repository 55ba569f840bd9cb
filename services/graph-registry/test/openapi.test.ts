import { describe, expect, it } from '@jest/globals';
import { GRAPH_NAME_PATTERN as NAME_PATTERN } from '@sp/platform';
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
      'GET /',
      'GET /health',
      'GET /schema',
      'GET /schema/diff',
      'GET /schema/versions',
      'GET /schema/versions/{version}',
      'GET /{name}',
      'POST /schema',
      'POST /schema/rollback',
      'POST /{name}',
    ]);
    expect(templateOf('/orders')).toBe('/{name}');
    expect(templateOf('/schema/versions/3')).toBe('/schema/versions/{version}');
    expect(templateOf('/a/b')).toBeUndefined();
  });

  it.each(operations.filter(([name]) => name !== 'GET /health'))('should require the API key on %s and document 401 and 503', (_name, operation) => {
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

  it('should state the same name pattern and body limits as the code', () => {
    expect((openapi.components.schemas.GraphName as { pattern: string }).pattern).toBe(NAME_PATTERN.source);
    expect((openapi.paths['/{name}']!.post as Operation).requestBody?.['x-max-body-bytes']).toBe(URL_BODY_LIMIT_BYTES);
    expect((openapi.paths['/schema']!.post as Operation).requestBody?.['x-max-body-bytes']).toBe(SCHEMA_BODY_LIMIT_BYTES);
  });
});
