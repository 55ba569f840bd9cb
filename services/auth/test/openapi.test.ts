import { describe, expect, it } from '@jest/globals';
import { forwardAuth } from '../src/forward-auth.js';
import { JSON_BODY_LIMIT_BYTES } from '../src/json-body.js';
import { MAX_REDIRECT_URI_LENGTH } from '../src/redirect-allowlist.js';
import { routeTable } from '../src/router.js';
import type { AuthServices } from '../src/services.js';
import { openapi } from './support/openapi-contract.js';
import { expectValidOpenApi31, operationsOf } from '../../../test/support/openapi-contract.js';

type Operation = { responses: Record<string, unknown>; requestBody?: Record<string, unknown>; parameters?: Array<{ name: string; schema?: { maxLength?: number } }> };
const operations = operationsOf<Operation>(openapi);

describe('openapi.yaml', () => {
  it('should be a valid OpenAPI 3.1 document', async () => {
    await expectValidOpenApi31(openapi);
  });

  it('should document exactly the routes the service has', () => {
    expect(operations.map(([name]) => name).sort()).toEqual([
      'DELETE /sessions',
      'DELETE /sessions/{id}',
      'GET /auth',
      'GET /login',
      'GET /redirect',
      'GET /sessions',
      'POST /backchannel-logout',
      'POST /logout',
      'POST /otp',
      'POST /otp/verify',
    ]);
    // The factories only close over their services, so an empty object is enough to list the paths.
    const paths = [...routeTable({} as AuthServices, forwardAuth({} as AuthServices)).keys(), '/sessions/{id}'];
    expect(paths.sort()).toEqual(Object.keys(openapi.paths).sort());
  });

  it('should state the same limits as the code', () => {
    for (const name of ['POST /otp', 'POST /otp/verify', 'POST /backchannel-logout']) {
      expect(operations.find(([candidate]) => candidate === name)![1].requestBody?.['x-max-body-bytes']).toBe(JSON_BODY_LIMIT_BYTES);
    }
    const login = operations.find(([name]) => name === 'GET /login')![1];
    expect(login.parameters?.find((parameter) => parameter.name === 'redirectUri')?.schema?.maxLength).toBe(MAX_REDIRECT_URI_LENGTH);
  });
});
