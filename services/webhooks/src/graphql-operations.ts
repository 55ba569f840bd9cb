/**
 * Every GraphQL operation the webhooks service sends to the gateway, in one place: a test
 * validates each against contract/gateway.graphql with graphql-js, so a change on either side
 * that breaks the contract fails the build, not production.
 */

const CLIENT_FIELDS = 'id number name phoneNumber providerCustomerId';
const PLAN_FIELDS = 'id name description icon active providerProductId providerVersion';
const PRICE_TIER_FIELDS = 'id planId amount currency interval active providerPriceId providerVersion';

/**
 * The create, update and delete mutations of a record the service keeps in step with the payment
 * provider's object (plans with products, price tiers with prices): the contract names them alike.
 * Creates and updates are conditional writes answering `{ applied, <record> }`.
 */
function versionedRecordMutations(type: 'Plan' | 'PriceTier', fields: string): Record<'create' | 'update' | 'delete', string> {
  const record = type === 'Plan' ? 'plan' : 'priceTier';
  return {
    create: `mutation Create${type}($input: Create${type}Input!) {
  create${type}(input: $input) { applied ${record} { ${fields} } }
}`,
    update: `mutation Update${type}($id: ID!, $input: Update${type}Input!) {
  update${type}(id: $id, input: $input) { applied ${record} { ${fields} } }
}`,
    delete: `mutation Delete${type}($id: ID!) {
  delete${type}(id: $id)
}`,
  };
}
const planMutations = versionedRecordMutations('Plan', PLAN_FIELDS);
const priceTierMutations = versionedRecordMutations('PriceTier', PRICE_TIER_FIELDS);

export const graphqlOperations = {
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
  createPlan: planMutations.create,
  updatePlan: planMutations.update,
  deletePlan: planMutations.delete,
  createPriceTier: priceTierMutations.create,
  updatePriceTier: priceTierMutations.update,
  deletePriceTier: priceTierMutations.delete,
  createPaymentConfirmation: `mutation CreatePaymentConfirmation($input: CreatePaymentConfirmationInput!) {
  createPaymentConfirmation(input: $input) { id clientId planId checkoutSessionId invoiceId amount currency paidAt }
}`,
  createPlanSubscription: `mutation CreatePlanSubscription($input: CreatePlanSubscriptionInput!) {
  createPlanSubscription(input: $input) { id clientId planId checkoutSessionId providerSubscriptionId }
}`,
  unsubscribe: `mutation Unsubscribe($clientId: ID!, $phoneNumber: String!, $subscribedBefore: String) {
  unsubscribe(clientId: $clientId, phoneNumber: $phoneNumber, subscribedBefore: $subscribedBefore)
}`,
  /** Readiness: the cheapest query every GraphQL server answers. */
  ping: `query Ping { __typename }`,
} as const;

export type GraphqlOperationName = keyof typeof graphqlOperations;

const operationNames = Object.fromEntries(
  Object.entries(graphqlOperations).map(([name, document]) => [name, /^(?:query|mutation)\s+(\w+)/.exec(document)![1]!]),
) as Record<GraphqlOperationName, string>;

/** The operation name inside each document (`query ClientByNumber …` → `ClientByNumber`). */
export function operationNameOf(name: GraphqlOperationName): string {
  return operationNames[name];
}
