import { paymentConfirmedEvent } from '@sp/messaging';
import { notSynchronized } from '../errors.js';
import type { CheckoutSessionObject, ValidEvent } from './event-schemas.js';
import type { Client, Plan } from '../gateway/gateway-port.js';
import type { CheckoutSessionDetails, InvoiceDetails } from './payment-provider.js';
import type { ActionResult, PaymentActionDeps, PaymentEventAction } from './payment-action.js';
import { processOnce } from '../events/process-once.js';

const PAID = new Set(['paid', 'no_payment_required']);

interface Checkout {
  session: CheckoutSessionDetails;
  invoice: InvoiceDetails | undefined;
  customerId: string;
}

/**
 * The session as the provider's API has it now, and its invoice. Fields the API leaves empty fall
 * back to the signed snapshot in the event (the invoice's customer, then the snapshot's).
 */
async function readCheckout(snapshot: CheckoutSessionObject, session: CheckoutSessionDetails, deps: PaymentActionDeps): Promise<Checkout> {
  const invoiceId = session.invoiceId ?? snapshot.invoice;
  const invoice = invoiceId === null ? undefined : await deps.paymentProvider.retrieveInvoice(invoiceId);
  const customerId = session.customerId ?? invoice?.customerId ?? snapshot.customer;
  if (customerId === null) throw notSynchronized(`checkout session ${session.id} has no customer`);
  return { session, invoice, customerId };
}

async function clientAndPlan(checkout: Checkout, deps: PaymentActionDeps): Promise<{ client: Client; plan: Plan }> {
  const client = await deps.gateway.clientByProviderCustomerId(checkout.customerId);
  if (client === null) throw notSynchronized(`no client has payment provider customer ${checkout.customerId}`);
  const productId = checkout.session.productIds[0];
  if (productId === undefined) throw notSynchronized(`checkout session ${checkout.session.id} has no product`);
  const plan = await deps.gateway.planByProviderProductId(productId);
  if (plan === null) throw notSynchronized(`no plan has payment provider product ${productId}`);
  return { client, plan };
}

/** Amounts of the invoice when there is one (its total), else of the session. */
function amountOf(checkout: Checkout, snapshot: CheckoutSessionObject): { amount: number; currency: string } {
  if (checkout.invoice) return { amount: checkout.invoice.total, currency: checkout.invoice.currency };
  return { amount: checkout.session.amountTotal ?? snapshot.amount_total ?? 0, currency: checkout.session.currency ?? snapshot.currency ?? 'usd' };
}

/** Creates the PaymentConfirmation and the PlanSubscription of a paid session and publishes PaymentConfirmedEvent. */
async function fulfil(event: ValidEvent<CheckoutSessionObject>, session: CheckoutSessionDetails, deps: PaymentActionDeps): Promise<ActionResult> {
  const snapshot = event.object;
  const checkout = await readCheckout(snapshot, session, deps);
  const { client, plan } = await clientAndPlan(checkout, deps);
  const { amount, currency } = amountOf(checkout, snapshot);
  const providerSubscriptionId = session.subscriptionId ?? snapshot.subscription;
  const paidAt = new Date(event.created * 1000).toISOString();
  const invoiceId = checkout.invoice?.id ?? null;
  const base = { checkoutSessionId: session.id, clientId: client.id, planId: plan.id };
  const confirmation = await deps.gateway.createPaymentConfirmation({ ...base, invoiceId, amount, currency, paidAt });
  const subscription = await deps.gateway.createPlanSubscription({ ...base, providerSubscriptionId });
  const data = {
    ...base,
    paymentConfirmationId: confirmation.id,
    planSubscriptionId: subscription.id,
    invoiceId,
    providerCustomerId: checkout.customerId,
    providerSubscriptionId,
    amount,
    currency,
    paidAt,
  };
  await deps.publisher.publish(deps.topics.payments, paymentConfirmedEvent(data));
  return 'processed';
}

/**
 * checkout.session.completed and checkout.session.async_payment_succeeded: read the session and
 * its invoice from the provider, find the client (by customer id) and the plan (by the product of
 * the first line item), create the PaymentConfirmation and the PlanSubscription, publish
 * PaymentConfirmedEvent. A completed session whose payment is still pending (`unpaid`, e.g. a
 * bank debit) is deferred: its async_payment_succeeded event does the work.
 *
 * Fulfilment runs once per checkout session, whichever of the two events comes first, on any
 * replica (processOnce keyed `checkout-session:<id>`); the other event is answered `duplicate`.
 */
function confirmCheckout(paidByEvent: boolean): PaymentEventAction<CheckoutSessionObject> {
  return async (event, deps) => {
    const session = await deps.paymentProvider.retrieveCheckoutSession(event.object.id);
    const paid = paidByEvent || PAID.has(event.object.payment_status) || PAID.has(session.paymentStatus);
    if (!paid) return 'deferred';
    const outcome = await processOnce(deps.processing, `checkout-session:${event.object.id}`, () => fulfil(event, session, deps), deps.processOnceOptions);
    return outcome.duplicate ? 'duplicate' : outcome.value;
  };
}

export const checkoutSessionCompleted = confirmCheckout(false);
export const checkoutSessionAsyncPaymentSucceeded = confirmCheckout(true);
