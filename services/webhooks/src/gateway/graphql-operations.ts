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
/** A query of one record by one required argument (`number: Int`), named after its field: `query ClientByNumber($number: Int!) …`. */
function lookupQuery(field: string, argument: string, fields: string): string {
  const [name, type] = argument.split(': ') as [string, string];
  return `query ${field[0]!.toUpperCase()}${field.slice(1)}($${name}: ${type}!) {
  ${field}(${name}: $${name}) { ${fields} }
}`;
}

const planMutations = versionedRecordMutations('Plan', PLAN_FIELDS);
const priceTierMutations = versionedRecordMutations('PriceTier', PRICE_TIER_FIELDS);

export const graphqlOperations = {
  clientByProviderCustomerId: lookupQuery('clientByProviderCustomerId', 'providerCustomerId: String', CLIENT_FIELDS),
  clientByPhoneNumber: lookupQuery('clientByPhoneNumber', 'phoneNumber: String', CLIENT_FIELDS),
  clientByNumber: lookupQuery('clientByNumber', 'number: Int', CLIENT_FIELDS),
  planByProviderProductId: lookupQuery('planByProviderProductId', 'providerProductId: String', PLAN_FIELDS),
  priceTierByProviderPriceId: lookupQuery('priceTierByProviderPriceId', 'providerPriceId: String', PRICE_TIER_FIELDS),
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
