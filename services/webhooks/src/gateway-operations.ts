/**
 * Every GraphQL operation the webhooks service sends to the gateway, in one place: a test
 * validates each against contract/gateway.graphql with graphql-js, so a change on either side
 * that breaks the contract fails the build, not production.
 */

const CLIENT_FIELDS = 'id number name phoneNumber providerCustomerId';
const PLAN_FIELDS = 'id name description icon active providerProductId';
const PRICE_TIER_FIELDS = 'id planId amount currency interval active providerPriceId';

export const gatewayOperations = {
  clientByProviderCustomerId: `query ClientByProviderCustomerId($providerCustomerId: String!) {
  clientByProviderCustomerId(providerCustomerId: $providerCustomerId) { ${CLIENT_FIELDS} }
}`,
  clientByPhoneNumber: `query ClientByPhoneNumber($phoneNumber: String!) {
  clientByPhoneNumber(phoneNumber: $phoneNumber) { ${CLIENT_FIELDS} }
}`,
  clientByNumber: `query ClientByNumber($number: Int!) {
  clientByNumber(number: $number) { ${CLIENT_FIELDS} }
}`,
  planByProviderProductId: `query PlanByProviderProductId($providerProductId: String!) {
  planByProviderProductId(providerProductId: $providerProductId) { ${PLAN_FIELDS} }
}`,
  priceTierByProviderPriceId: `query PriceTierByProviderPriceId($providerPriceId: String!) {
  priceTierByProviderPriceId(providerPriceId: $providerPriceId) { ${PRICE_TIER_FIELDS} }
}`,
  subscribers: `query Subscribers($clientId: ID!, $first: Int!, $after: String) {
  subscribers(clientId: $clientId, first: $first, after: $after) { items { phoneNumber locale } nextCursor }
}`,
  createPlan: `mutation CreatePlan($input: CreatePlanInput!) {
  createPlan(input: $input) { ${PLAN_FIELDS} }
}`,
  updatePlan: `mutation UpdatePlan($id: ID!, $input: UpdatePlanInput!) {
  updatePlan(id: $id, input: $input) { ${PLAN_FIELDS} }
}`,
  deletePlan: `mutation DeletePlan($id: ID!) {
  deletePlan(id: $id)
}`,
  createPriceTier: `mutation CreatePriceTier($input: CreatePriceTierInput!) {
  createPriceTier(input: $input) { ${PRICE_TIER_FIELDS} }
}`,
  updatePriceTier: `mutation UpdatePriceTier($id: ID!, $input: UpdatePriceTierInput!) {
  updatePriceTier(id: $id, input: $input) { ${PRICE_TIER_FIELDS} }
}`,
  deletePriceTier: `mutation DeletePriceTier($id: ID!) {
  deletePriceTier(id: $id)
}`,
  createPaymentConfirmation: `mutation CreatePaymentConfirmation($input: CreatePaymentConfirmationInput!) {
  createPaymentConfirmation(input: $input) { id clientId planId checkoutSessionId invoiceId amount currency paidAt }
}`,
  createPlanSubscription: `mutation CreatePlanSubscription($input: CreatePlanSubscriptionInput!) {
  createPlanSubscription(input: $input) { id clientId planId checkoutSessionId providerSubscriptionId }
}`,
  unsubscribe: `mutation Unsubscribe($clientId: ID!, $phoneNumber: String!) {
  unsubscribe(clientId: $clientId, phoneNumber: $phoneNumber)
}`,
  /** Readiness: the cheapest query every GraphQL server answers. */
  ping: `query Ping { __typename }`,
} as const;

export type GatewayOperationName = keyof typeof gatewayOperations;

const operationNames = Object.fromEntries(
  Object.entries(gatewayOperations).map(([name, document]) => [name, /^(?:query|mutation)\s+(\w+)/.exec(document)![1]!]),
) as Record<GatewayOperationName, string>;

/** The operation name inside each document (`query ClientByNumber …` → `ClientByNumber`). */
export function operationNameOf(name: GatewayOperationName): string {
  return operationNames[name];
}
