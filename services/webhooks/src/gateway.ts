/**
 * The platform's GraphQL gateway as the webhooks service uses it (contract:
 * contract/gateway.graphql). The real adapter is graphql-gateway.ts. Every method rejects with an
 * AppError: 503 when the gateway or the identity provider cannot be reached or fails (5xx), 502
 * when the gateway answers with GraphQL errors, so a webhook answers 5xx and the provider retries.
 */
export interface Gateway {
  clientByProviderCustomerId(providerCustomerId: string): Promise<Client | null>;
  clientByPhoneNumber(phoneNumber: string): Promise<Client | null>;
  clientByNumber(number: number): Promise<Client | null>;
  planByProviderProductId(providerProductId: string): Promise<Plan | null>;
  priceTierByProviderPriceId(providerPriceId: string): Promise<PriceTier | null>;
  subscribers(clientId: string, first: number, after?: string): Promise<SubscriberPage>;
  /** Idempotent on `providerProductId`. */
  createPlan(input: CreatePlanInput): Promise<Plan>;
  updatePlan(id: string, input: UpdatePlanInput): Promise<Plan | null>;
  deletePlan(id: string): Promise<boolean>;
  /** Idempotent on `providerPriceId`. */
  createPriceTier(input: CreatePriceTierInput): Promise<PriceTier>;
  updatePriceTier(id: string, input: UpdatePriceTierInput): Promise<PriceTier | null>;
  deletePriceTier(id: string): Promise<boolean>;
  /** Idempotent on `checkoutSessionId`. */
  createPaymentConfirmation(input: CreatePaymentConfirmationInput): Promise<PaymentConfirmation>;
  /** Idempotent on `checkoutSessionId`. */
  createPlanSubscription(input: CreatePlanSubscriptionInput): Promise<PlanSubscription>;
  /** True when the subscriber's subscription to the client ended now, false when there was none. */
  unsubscribe(clientId: string, phoneNumber: string): Promise<boolean>;
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
}

export interface PriceTier {
  id: string;
  planId: string;
  amount: number | null;
  currency: string;
  interval: string | null;
  active: boolean;
  providerPriceId: string;
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
}

export type UpdatePlanInput = Omit<CreatePlanInput, 'providerProductId'>;

export interface CreatePriceTierInput {
  providerPriceId: string;
  planId: string;
  amount: number | null;
  currency: string;
  interval: string | null;
  active: boolean;
}

export interface UpdatePriceTierInput {
  amount: number | null;
  /** False for an archived price. */
  active: boolean;
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
