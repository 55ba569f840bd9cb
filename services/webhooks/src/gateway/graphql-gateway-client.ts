import { unavailable } from '@sp/core';
import { badGateway } from '@sp/core';
import type { GatewayPort } from './gateway-port.js';
import { graphqlOperations, operationNameOf, type GraphqlOperationName } from './graphql-operations.js';
import { createHttpClient, type HttpAnswer, type HttpClient } from '@sp/http';
import { withTokenRetry, type OidcTokenClient } from '@sp/identity';

export interface GraphqlGatewayClientOptions {
  /** GRAPHQL_API_URL: the gateway's GraphQL endpoint. */
  url: string;
  /** Client-credentials tokens of the service account. */
  tokens: OidcTokenClient;
  /** Upper bound for one call. Default 5000 ms. */
  timeoutMs?: number;
  /** Keep-alive connections to the gateway; a client of its own by default. */
  http?: HttpClient;
}

interface GraphqlResponse {
  data?: Record<string, unknown> | null;
  errors?: { message?: string }[];
}

const DEPENDENCY = 'GraphQL gateway';

/** The `data` of an answer: 5xx, a cut-off or non-JSON answer are 503; GraphQL errors or other statuses 502. */
function readData(name: GraphqlOperationName, answer: HttpAnswer): Record<string, unknown> {
  if (answer.status >= 500) throw unavailable(DEPENDENCY, new Error(`${operationNameOf(name)}: gateway answered ${answer.status}`));
  let body: GraphqlResponse;
  try {
    body = JSON.parse(answer.text) as GraphqlResponse;
  } catch (err) {
    throw unavailable(DEPENDENCY, err);
  }
  const errors = body.errors ?? [];
  const ok = answer.status >= 200 && answer.status < 300;
  if (!ok || errors.length > 0 || !body.data) {
    const messages = errors.length > 0 ? errors.map((error) => error.message).join('; ') : 'no data';
    throw badGateway(DEPENDENCY, new Error(`${operationNameOf(name)}: ${answer.status} ${messages}`));
  }
  return body.data;
}

/**
 * The gateway over HTTP (GraphQL over POST, JSON), each call with a client-credentials bearer
 * token. A 401 answer means the token was revoked or expired early: it is dropped and the call
 * repeated once with a fresh one.
 */
export function createGraphqlGatewayClient(options: GraphqlGatewayClientOptions): GatewayPort {
  const timeoutMs = options.timeoutMs ?? 5000;
  const http = options.http ?? createHttpClient();

  const post = async (name: GraphqlOperationName, variables: Record<string, unknown>, token: string): Promise<HttpAnswer> => {
    const body = JSON.stringify({ query: graphqlOperations[name], operationName: operationNameOf(name), variables });
    const headers = { 'content-type': 'application/json', accept: 'application/json', authorization: `Bearer ${token}` };
    try {
      return await http.post(options.url, body, headers, timeoutMs);
    } catch (err) {
      throw unavailable(DEPENDENCY, err);
    }
  };

  const send = (name: GraphqlOperationName, variables: Record<string, unknown>): Promise<HttpAnswer> =>
    withTokenRetry(options.tokens, (token) => post(name, variables, token), { answer: (answer) => answer.status === 401 });

  const execute = async <T>(name: GraphqlOperationName, variables: Record<string, unknown> = {}): Promise<T> => {
    const data = readData(name, await send(name, variables));
    return (name === 'ping' ? data : data[name]) as T;
  };

  return {
    clientByProviderCustomerId: (providerCustomerId) => execute('clientByProviderCustomerId', { providerCustomerId }),
    clientByPhoneNumber: (phoneNumber) => execute('clientByPhoneNumber', { phoneNumber }),
    clientByNumber: (number) => execute('clientByNumber', { number }),
    planByProviderProductId: (providerProductId) => execute('planByProviderProductId', { providerProductId }),
    priceTierByProviderPriceId: (providerPriceId) => execute('priceTierByProviderPriceId', { providerPriceId }),
    subscribers: (clientId, first, after) => execute('subscribers', { clientId, first, after: after ?? null }),
    createPlan: (input) => execute('createPlan', { input }),
    updatePlan: (id, input) => execute('updatePlan', { id, input }),
    deletePlan: (id) => execute('deletePlan', { id }),
    createPriceTier: (input) => execute('createPriceTier', { input }),
    updatePriceTier: (id, input) => execute('updatePriceTier', { id, input }),
    deletePriceTier: (id) => execute('deletePriceTier', { id }),
    createPaymentConfirmation: (input) => execute('createPaymentConfirmation', { input }),
    createPlanSubscription: (input) => execute('createPlanSubscription', { input }),
    unsubscribe: (clientId, phoneNumber, subscribedBefore) => execute('unsubscribe', { clientId, phoneNumber, subscribedBefore: subscribedBefore.toISOString() }),
    async check() {
      await execute('ping');
    },
    close: () => http.close(),
  };
}
