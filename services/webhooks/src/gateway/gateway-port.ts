/**
 * The platform's GraphQL gateway as the webhooks service uses it (contract:
 * contract/gateway.graphql), and the records it answers with. The real adapter is
 * graphql-gateway-client.ts. Every method rejects with an AppError: 503 when the gateway or the
 * identity provider cannot be reached or fails (5xx), 502 when the gateway answers with GraphQL
 * errors, so a webhook answers 5xx and the provider retries.
 */
export interface GatewayPort {
  clientByProviderCustomerId(providerCustomerId: string): Promise<Client | null>;
  clientByPhoneNumber(phoneNumber: string): Promise<Client | null>;
  clientByNumber(number: number): Promise<Client | null>;
  planByProviderProductId(providerProductId: string): Promise<Plan | null>;
  priceTierByProviderPriceId(providerPriceId: string): Promise<PriceTier | null>;
  subscribers(clientId: string, first: number, after?: string): Promise<SubscriberPage>;
  /** Idempotent on `providerProductId`; an existing plan is updated as by updatePlan. Conditional on `providerVersion`. */
  createPlan(input: CreatePlanInput): Promise<PlanWrite>;
  /** Applied only when `input.providerVersion` is not older than the plan's (see contract/gateway.graphql). */
  updatePlan(id: string, input: UpdatePlanInput): Promise<PlanWrite>;
  deletePlan(id: string): Promise<boolean>;
  /** Idempotent on `providerPriceId`; an existing tier is updated as by updatePriceTier. Conditional on `providerVersion`. */
  createPriceTier(input: CreatePriceTierInput): Promise<PriceTierWrite>;
  /** Applied only when `input.providerVersion` is not older than the tier's (see contract/gateway.graphql). */
  updatePriceTier(id: string, input: UpdatePriceTierInput): Promise<PriceTierWrite>;
  deletePriceTier(id: string): Promise<boolean>;
  /** Idempotent on `checkoutSessionId`. */
  createPaymentConfirmation(input: CreatePaymentConfirmationInput): Promise<PaymentConfirmation>;
  /** Idempotent on `checkoutSessionId`. */
  createPlanSubscription(input: CreatePlanSubscriptionInput): Promise<PlanSubscription>;
  /**
   * True when the subscriber's subscription to the client ended now, false when there was none that
   * began before `subscribedBefore` (the time of the request): a write that lands after its deadline
   * never ends a subscription made since.
   */
  unsubscribe(clientId: string, phoneNumber: string, subscribedBefore: Date): Promise<boolean>;
  /** Readiness: a token from the identity provider and an answer from the gateway. */
  check(): Promise<void>;
  /** Closes the kept-alive connections. */
  close(): void;
}

export interface Client {
  id: string;
  number: number;
  name: string;
  phoneNumber: string | null;
  providerCustomerId: string | null;
}

export interface Subscriber {
  phoneNumber: string;
  locale: string | null;
}

export interface SubscriberPage {
  items: Subscriber[];
  nextCursor: string | null;
}

export interface Plan {
  id: string;
  name: string;
  description: string | null;
  icon: string | null;
  active: boolean;
  providerProductId: string | null;
  /** Unix seconds of the provider state the plan holds; null when none was written. */
  providerVersion: number | null;
}

export interface PriceTier {
  id: string;
  planId: string;
  amount: number | null;
  currency: string;
  interval: string | null;
  active: boolean;
  providerPriceId: string;
  providerVersion: number | null;
}

/** What a conditional write did: `applied` false when the record holds a newer version (and was left as it was). */
export interface PlanWrite {
  applied: boolean;
  /** Null when no plan has the id. */
  plan: Plan | null;
}

export interface PriceTierWrite {
  applied: boolean;
  priceTier: PriceTier | null;
}

export interface PaymentConfirmation {
  id: string;
  clientId: string;
  planId: string;
  checkoutSessionId: string;
  invoiceId: string | null;
  amount: number;
  currency: string;
  paidAt: string;
}

export interface PlanSubscription {
  id: string;
  clientId: string;
  planId: string;
  checkoutSessionId: string;
  providerSubscriptionId: string | null;
}

export interface CreatePlanInput {
  providerProductId: string;
  name: string;
  description: string | null;
  icon: string | null;
  active: boolean;
  /** Unix seconds of the provider state written: the write is applied only when not older than the record's. */
  providerVersion: number;
}

export type UpdatePlanInput = Omit<CreatePlanInput, 'providerProductId'>;

export interface CreatePriceTierInput {
  providerPriceId: string;
  planId: string;
  amount: number | null;
  currency: string;
  interval: string | null;
  active: boolean;
  providerVersion: number;
}

export interface UpdatePriceTierInput {
  amount: number | null;
  /** False for an archived price. */
  active: boolean;
  providerVersion: number;
}

export interface CreatePaymentConfirmationInput {
  checkoutSessionId: string;
  clientId: string;
  planId: string;
  invoiceId: string | null;
  amount: number;
  currency: string;
  paidAt: string;
}

export interface CreatePlanSubscriptionInput {
  checkoutSessionId: string;
  clientId: string;
  planId: string;
  providerSubscriptionId: string | null;
}
