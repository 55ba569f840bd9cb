import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import { infra } from '../../../../test/support/infra.js';

/** The library's own test helper signs payloads exactly as Stripe does. */
const stripe = new Stripe('sk_test_4eC39HqLyjWDarjtT1zdp7dc');

const uid = (): string => randomUUID().replace(/-/g, '').slice(0, 16);

export { stripeEvent } from '../../../../test/support/stripe-event.js';

/** The `Stripe-Signature` header for `payload`, signed with `secret` at `timestamp` (Unix seconds; now by default). */
export function signStripe(payload: string, secret: string, timestamp = Math.floor(Date.now() / 1000)): string {
  return stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp });
}

export function productObject(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return {
    id: `prod_${uid()}`,
    object: 'product',
    active: true,
    created: now,
    default_price: null,
    description: 'Weekly deals by SMS',
    images: ['https://files.example.com/plans/weekly-deals.png'],
    livemode: false,
    marketing_features: [],
    metadata: {},
    name: 'Weekly deals',
    package_dimensions: null,
    shippable: null,
    statement_descriptor: null,
    tax_code: null,
    type: 'service',
    unit_label: null,
    updated: now,
    url: null,
    ...overrides,
  };
}

export function priceObject(productId: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `price_${uid()}`,
    object: 'price',
    active: true,
    billing_scheme: 'per_unit',
    created: Math.floor(Date.now() / 1000),
    currency: 'usd',
    custom_unit_amount: null,
    livemode: false,
    lookup_key: null,
    metadata: {},
    nickname: null,
    product: productId,
    recurring: { interval: 'month', interval_count: 1, meter: null, trial_period_days: null, usage_type: 'licensed' },
    tax_behavior: 'unspecified',
    tiers_mode: null,
    transform_quantity: null,
    type: 'recurring',
    unit_amount: 1500,
    unit_amount_decimal: '1500',
    ...overrides,
  };
}

export function checkoutSessionObject(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    id: `cs_test_${uid()}`,
    object: 'checkout.session',
    amount_subtotal: 1000,
    amount_total: 1000,
    cancel_url: 'https://app.example.com/plans',
    created: Math.floor(Date.now() / 1000),
    currency: 'usd',
    customer: null,
    customer_details: { email: 'owner@shop.example.com', name: 'Corner Shop', phone: '+15550001111' },
    invoice: `in_${uid()}`,
    livemode: false,
    metadata: {},
    mode: 'subscription',
    payment_status: 'paid',
    status: 'complete',
    subscription: `sub_${uid()}`,
    success_url: 'https://app.example.com/thanks',
    ...overrides,
  };
}

/**
 * What stripe-mock answers for every checkout session and invoice (its responses are fixed
 * fixtures whatever the id): the customer of its invoices and the product of its session line
 * items, and its price and product. Tests seed the GraphQL fixture with a client and a plan carrying these ids.
 */
export async function stripeMockFixtures(): Promise<{ customerId: string; productId: string; invoiceTotal: number; invoiceCurrency: string; priceAmount: number | null; priceActive: boolean; productName: string }> {
  const url = new URL(infra('STRIPE_MOCK_URL'));
  const api = new Stripe('sk_test_4eC39HqLyjWDarjtT1zdp7dc', { host: url.hostname, port: Number(url.port), protocol: 'http', telemetry: false });
  const invoice = await api.invoices.retrieve('in_fixture');
  const session = await api.checkout.sessions.retrieve('cs_test_fixture', { expand: ['line_items'] });
  const product = session.line_items?.data[0]?.price?.product;
  const price = await api.prices.retrieve('price_fixture');
  const providerProduct = await api.products.retrieve('prod_fixture');
  return {
    priceAmount: price.unit_amount,
    priceActive: price.active,
    productName: providerProduct.name,
    customerId: invoice.customer as string,
    productId: typeof product === 'string' ? product : product!.id,
    invoiceTotal: invoice.total,
    invoiceCurrency: invoice.currency,
  };
}
