import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { buildClientSchema, buildSchema, getIntrospectionQuery, Kind, parse, printSchema, validate, type IntrospectionQuery, type OperationDefinitionNode } from 'graphql';
import { AppError } from '@sp/core';
import { createOidcTokenClient } from '@sp/identity';
import { graphqlOperations } from '../src/gateway/graphql-operations.js';
import { createGraphqlGatewayClient } from '../src/gateway/graphql-gateway-client.js';
import { gatewayContractSdl, startGraphqlGateway, type GraphqlGatewayFixture } from '../../../test/support/graphql-gateway.js';
import { infra } from '../../../test/support/infra.js';

const contract = buildSchema(gatewayContractSdl);
const operations = Object.entries(graphqlOperations);

const keycloak = (clientSecret = infra('KEYCLOAK_SERVICES_CLIENT_SECRET'), serverUrl = infra('KEYCLOAK_URL')) =>
  createOidcTokenClient({
    issuer: `${serverUrl}/realms/${infra('KEYCLOAK_REALM')}`,
    grant: { type: 'client_credentials', clientId: infra('KEYCLOAK_SERVICES_CLIENT_ID'), clientSecret },
    allowInsecureHttp: true,
  });

let fixture: GraphqlGatewayFixture;

beforeAll(async () => {
  fixture = await startGraphqlGateway();
});

afterAll(async () => {
  await fixture?.close();
});

describe('the gateway contract', () => {
  it.each(operations)('should validate operation %s against contract/gateway.graphql', (_name, document) => {
    expect(validate(contract, parse(document)).map((error) => error.message)).toEqual([]);
  });

  it('should list exactly the queries and mutations the service sends', () => {
    const used = new Set(
      operations.flatMap(([, document]) =>
        parse(document)
          .definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION)
          .flatMap((operation) => operation.selectionSet.selections.flatMap((s) => (s.kind === Kind.FIELD ? [s.name.value] : []))),
      ),
    );
    const declared = [...Object.keys(contract.getQueryType()!.getFields()), ...Object.keys(contract.getMutationType()!.getFields())];
    expect(declared.filter((field) => !used.has(field))).toEqual([]);
    expect(declared.length).toBe(15);
  });

  it('should be served exactly by the GraphQL fixture', async () => {
    const token = await keycloak().token();
    const response = await fetch(fixture.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: getIntrospectionQuery({ descriptions: true, schemaDescription: true }) }),
    });
    const { data } = (await response.json()) as { data: IntrospectionQuery };
    expect(printSchema(buildClientSchema(data))).toBe(printSchema(contract));
  });
});

describe('calls to the gateway', () => {
  it('should carry a Keycloak client-credentials token, which the fixture checks against the realm keys', async () => {
    const gateway = createGraphqlGatewayClient({ url: fixture.url, tokens: keycloak() });
    const tokensBefore = fixture.tokens.distinct.size;
    fixture.addClient({ number: 5, name: 'Bakery', phoneNumber: '+15550005555' });
    expect(await gateway.clientByNumber(5)).toMatchObject({ number: 5, name: 'Bakery', phoneNumber: '+15550005555', providerCustomerId: null });
    expect(await gateway.clientByNumber(6)).toBeNull();
    expect(fixture.tokens.distinct.size - tokensBefore).toBe(1);
  });

  it('should be refused by the fixture without a token or with a forged one', async () => {
    const none = await fetch(fixture.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }' }) });
    expect(none.status).toBe(401);
    const token = await keycloak().token();
    const [header, payload] = token.split('.');
    const forged = await fetch(fixture.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${header}.${payload}.${'A'.repeat(342)}` },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(forged.status).toBe(401);
  });

  it('should answer 502 when the gateway refuses the token, after one attempt with a fresh token', async () => {
    const strict = await startGraphqlGateway({ allowedClientIds: ['some-other-service'] });
    try {
      const gateway = createGraphqlGatewayClient({ url: strict.url, tokens: keycloak() });
      const error = await gateway.clientByNumber(5).catch((err: unknown) => err);
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).status).toBe(502);
      expect(strict.tokens.refused).toBe(2);
    } finally {
      await strict.close();
    }
  });

  it('should answer 502 when Keycloak refuses the client secret, and 503 when Keycloak cannot be reached', async () => {
    const wrongSecret = createGraphqlGatewayClient({ url: fixture.url, tokens: keycloak('wrong-secret') });
    expect(((await wrongSecret.check().catch((err: unknown) => err)) as AppError).status).toBe(502);
    const unreachable = keycloak(infra('KEYCLOAK_SERVICES_CLIENT_SECRET'), 'http://127.0.0.1:1');
    const gateway = createGraphqlGatewayClient({ url: fixture.url, tokens: unreachable });
    const error = (await gateway.check().catch((err: unknown) => err)) as AppError;
    expect(error.status).toBe(503);
    expect(error.message).toBe('identity provider is unavailable');
  });
});
