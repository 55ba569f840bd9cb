import { describe, expect, it } from '@jest/globals';
import { forwardAuth } from '../src/http/forward-auth.js';
import { readFileSync } from 'node:fs';
import { JSON_BODY_LIMIT_BYTES } from '../src/http/json-body.js';
import { LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS } from '../src/oidc/logout-token.js';
import { MAX_REDIRECT_URI_LENGTH } from '../src/oidc/redirect-allowlist.js';
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
      'GET /signin',
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
    const signin = operations.find(([name]) => name === 'GET /signin')![1];
    expect(signin.parameters?.find((parameter) => parameter.name === 'rd')?.schema?.maxLength).toBe(MAX_REDIRECT_URI_LENGTH);
  });

  it('should state the Logout Token clock tolerance once, in the design note, as the code has it', () => {
    // The README refers to the design note, which states the number.
    const docs = ['../README.md', '../../../docs/design/auth.md'].map((path) => readFileSync(new URL(path, import.meta.url), 'utf8'));
    const statements = docs.join('\n').match(/clock\s+tolerance[^.;)]*?\d+\s*s\b/gi) ?? [];
    expect(statements).toEqual([expect.stringMatching(new RegExp(`\\b${LOGOUT_TOKEN_CLOCK_TOLERANCE_SECONDS} s$`))]);
    // The contract refers to it rather than stating a number of its own.
    const description = JSON.stringify(operations.find(([name]) => name === 'POST /backchannel-logout')![1]);
    expect(description).not.toMatch(/\d+\s*s\b[^"]*(future|tolerance)|(future|tolerance)[^"]*?\d+\s*s\b/);
  });
});
