import { beforeAll, describe, expect, it } from '@jest/globals';
import { p99UnderHostileLoad } from '../../../test/support/p99-under-hostile-load.js';
import { PAYMENT_BODY_LIMIT_BYTES } from '../src/payment-webhook.js';
import { SMS_BODY_LIMIT_BYTES } from '../src/sms-webhook.js';
import { freshPhone } from './support/sms-suite.js';
import { stripeEvent } from './support/stripe-events.js';
import { postSms, postStripeEvent, replyText, smsForm, STRIPE_SECRETS, type Answer, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';
import { useStripeWebhooksSuite } from './support/stripe-webhooks-suite.js';

let deps: Dependencies;
let service: WebhooksInstance;
useStripeWebhooksSuite((suite) => ({ deps, service } = suite));

let owner: string;
beforeAll(() => {
  owner = freshPhone();
  deps.gateway.addClient({ number: 8, name: 'Hostile Shop', phoneNumber: owner });
});

const ID = '__EVENT_ID__';
/** A body just under the payment provider limit: `prefix`, then `unit` repeated, then `suffix`. */
const fill = (prefix: string, unit: string, suffix: string): string =>
  `${prefix}${unit.repeat(Math.floor((PAYMENT_BODY_LIMIT_BYTES - 512 - prefix.length - suffix.length) / unit.length))}${suffix}`;
const envelope = (type: string, object: string): string =>
  `{"id":"${ID}","object":"event","type":"${type}","created":${Math.floor(Date.now() / 1000)},"livemode":false,"data":{"object":${object}}}`;

/** The most expensive payment provider requests: each about 256 KiB, signed unless said otherwise. */
const STRIPE_BODIES: { name: string; body: string; status: number; signed: boolean }[] = [
  // Nested 128k deep: parsing alone would hold the event loop ~200 ms; refused before it.
  { name: 'deep', body: fill('{"data":', '[', ''), status: 400, signed: true },
  // An unlisted type with ~15,000 fields: parsed and validated as an envelope, then ignored.
  { name: 'wide', body: envelope('invoice.paid', fill('{"object":"invoice"', ',"k":"0123456789"', '}')), status: 200, signed: true },
  // A handled type with ~8,000 metadata entries (each validated), then a plan created.
  { name: 'metadata', body: envelope('product.created', fill(`{"id":"prod_${ID}","name":"Big","active":true,"metadata":{"a":"0"`, ',"m":"0123456789abcdef"', '}}')), status: 200, signed: true },
  // Unsigned: refused after the HMAC over 256 KiB with each configured secret.
  { name: 'forged', body: envelope('product.created', fill('{"id":"prod_x","name":"x","active":true,"description":"', 'x', '"}')), status: 400, signed: false },
];

let hostileCounter = 0;
async function hostileRequest(i: number): Promise<Answer> {
  const kind = i % (STRIPE_BODIES.length + 2);
  if (kind === STRIPE_BODIES.length) {
    // A client's longest accepted message: 1600 emoji (a ~19 KiB form), stored as a draft.
    const answer = await postSms(service.baseUrl, smsForm(owner, '🍞'.repeat(1600)));
    expect(replyText(answer)).toMatch(/^Announcement saved/);
    return answer;
  }
  if (kind === STRIPE_BODIES.length + 1) {
    // The largest form accepted, refused as too long a message.
    const answer = await postSms(service.baseUrl, smsForm(owner, 'x'.repeat(SMS_BODY_LIMIT_BYTES - 1024)));
    expect(replyText(answer)).toMatch(/at most 1600 are accepted/);
    return answer;
  }
  const { body, status, signed } = STRIPE_BODIES[kind]!;
  const payload = body.replaceAll(ID, `evt_hostile_${++hostileCounter}_${Date.now()}`);
  const answer = await postStripeEvent(service.baseUrl, payload, signed ? {} : { signature: `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}` });
  expect(answer.status).toBe(status);
  return answer;
}

let victimCounter = 0;
/** Another caller: an unlisted Stripe event (signature, envelope, ignored) or an SMS asking for the commands. */
async function victimRequest(): Promise<void> {
  if (++victimCounter % 2 === 0) {
    const answer = await postSms(service.baseUrl, smsForm(freshPhone(), 'COMMANDS'));
    expect(replyText(answer)).toMatch(/^Commands:/);
    return;
  }
  const answer = await postStripeEvent(service.baseUrl, stripeEvent('customer.updated', { id: 'cus_1', object: 'customer' }), { secret: STRIPE_SECRETS[1] });
  expect(answer.json).toEqual({ received: true, result: 'ignored' });
}

describe('the most expensive requests the webhooks service accepts or refuses', () => {
  it('should each be within the limits that define them', () => {
    for (const { body } of STRIPE_BODIES) expect(Buffer.byteLength(body)).toBeLessThanOrEqual(PAYMENT_BODY_LIMIT_BYTES);
    expect(new URLSearchParams(smsForm(owner, '🍞'.repeat(1600))).toString().length).toBeLessThanOrEqual(SMS_BODY_LIMIT_BYTES);
  });

  it("should keep other callers' p99 under 100 ms while they run back to back", async () => {
    const figures = await p99UnderHostileLoad({ victim: victimRequest, hostile: hostileRequest, calls: 200, victimConcurrency: 2, hostileConcurrency: 2 });
    // Visible in the test output: the figures behind the verdict.
    process.stdout.write(`webhooks worst request: ${JSON.stringify(figures)}\n`);
    expect(figures.hostileCalls).toBeGreaterThanOrEqual(STRIPE_BODIES.length + 2);
    expect(figures.p99Ms).toBeLessThan(100);
  }, 120_000);
});
