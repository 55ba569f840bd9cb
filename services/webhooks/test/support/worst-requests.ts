// The webhooks service's most expensive requests and the service to send them to, shared by
// test/worst-request.test.ts (what a user notices: each answered as expected, other callers all
// answered, each request cheap in CPU) and make bench (bench/worst-request.bench.ts: the other
// callers' p99 against its target).
import twilio from 'twilio';
import { hostileWorker, type HostileWorker } from '../../../../test/support/hostile-worker.js';
import { startService, npmStart, type ServiceProcess } from '../../../../test/support/service-process.js';
import { PAYMENT_WEBHOOK_PATH, SMS_WEBHOOK_PATH } from '../../src/app.js';
import { PAYMENT_BODY_LIMIT_BYTES, PAYMENT_BODY_MAX_SEPARATORS } from '../../src/payments/payment-webhook.js';
import { SMS_BODY_LIMIT_BYTES } from '../../src/sms/sms-webhook.js';
import { freshPhone } from './sms-suite.js';
import { signStripe, stripeEvent } from './stripe-events.js';
import { API_KEY, postSms, postStripeEvent, PUBLIC_BASE_URL, replyText, smsForm, startDependencies, STRIPE_SECRETS, testEnvironment, TWILIO_TOKENS } from './webhooks-env.js';

const ID = '__EVENT_ID__';
/** A body just under the payment provider limit: `prefix`, then `unit(0)`, `unit(1)`, … as many as fit, then `suffix`. */
function fill(prefix: string, unit: (i: number) => string, suffix: string, maxUnits = Number.POSITIVE_INFINITY): string {
  const room = PAYMENT_BODY_LIMIT_BYTES - 512 - prefix.length - suffix.length;
  const units: string[] = [];
  for (let i = 0, size = 0; i < maxUnits && size + unit(i).length <= room; size += unit(i).length, i++) units.push(unit(i));
  return `${prefix}${units.join('')}${suffix}`;
}
const envelope = (type: string, object: string): string =>
  `{"id":"${ID}","object":"event","type":"${type}","created":${Math.floor(Date.now() / 1000)},"livemode":false,"data":{"object":${object}}}`;
const FIELDS = (PAYMENT_BODY_MAX_SEPARATORS - 200) / 2;

/** The most expensive payment provider requests: each about 256 KiB, signed unless said otherwise. */
export const STRIPE_BODIES: { name: string; body: string; status: number; signed: boolean }[] = [
  // Nested 128k deep: parsing alone would hold the event loop ~200 ms; refused before it.
  { name: 'deep', body: fill('{"data":', () => '[', ''), status: 400, signed: true },
  // An unlisted type with as many fields as accepted (each a long string): parsed, validated as an envelope, ignored.
  { name: 'wide', body: envelope('invoice.paid', fill('{"object":"invoice"', (i) => `,"k${i}":"${'v'.repeat(48)}"`, '}', FIELDS)), status: 200, signed: true },
  // ~12,000 fields: more than accepted, refused before parsing.
  { name: 'wider', body: envelope('invoice.paid', fill('{"object":"invoice"', (i) => `,"k${i}":"0123456789"`, '}')), status: 400, signed: true },
  // A handled type with as many metadata entries as the field count allows: refused by the schema (Stripe allows 50) without copying them.
  { name: 'metadata', body: envelope('product.created', fill(`{"id":"prod_${ID}","name":"Big","active":true,"metadata":{"a":"0"`, (i) => `,"m${i}":"${'v'.repeat(48)}"`, '}}', FIELDS)), status: 400, signed: true },
  // A handled type accepted whole: a plan created with a ~250 KiB description.
  { name: 'description', body: envelope('product.created', fill(`{"id":"prod_${ID}","name":"Big","active":true,"description":"`, () => 'd'.repeat(1024), '"}')), status: 200, signed: true },
  // Unsigned: refused after the HMAC over 256 KiB with each configured secret.
  { name: 'forged', body: envelope('product.created', fill('{"id":"prod_x","name":"x","active":true,"description":"', () => 'x'.repeat(1024), '"}')), status: 400, signed: false },
];

/** A hostile request prepared in full (signed), so that the worker only sends it. */
export interface PreparedRequest {
  name: string;
  url: string;
  method: 'POST';
  headers: Record<string, string>;
  body: string;
  /** The status it must be answered with. */
  status: number;
}

/** For hostileWorker: sends the prepared requests in turn over one keep-alive connection, each expecting its status. */
const PREPARED_REQUESTS = `(d) => {
  const http = require('node:http');
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  let next = 0;
  return () => new Promise((resolve, reject) => {
    const r = d.requests[next++ % d.requests.length];
    const req = http.request(r.url, { method: r.method, headers: r.headers, agent }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === r.status ? resolve() : reject(new Error(r.name + ' answered ' + res.statusCode + ', expected ' + r.status))));
    });
    req.on('error', reject);
    req.end(r.body);
  });
}`;

const query = `?code=${encodeURIComponent(API_KEY)}`;
const PER_KIND = 20;
/** Kinds of hostile request: every payment provider body and two SMS. */
export const KINDS = STRIPE_BODIES.length + 2;

/** Every hostile request to `baseUrl`, signed in advance (a body sent again is a duplicate after the same verification and parsing). */
export function hostileRequests(baseUrl: string, owner: string): PreparedRequest[] {
  let counter = 0;
  const stripe = STRIPE_BODIES.flatMap(({ name, body, status, signed }) =>
    Array.from({ length: PER_KIND }, (): PreparedRequest => {
      const payload = body.replaceAll(ID, `evt_hostile_${Date.now()}_${++counter}`);
      const signature = signed ? signStripe(payload, STRIPE_SECRETS[0]) : `t=${Math.floor(Date.now() / 1000)},v1=${'0'.repeat(64)}`;
      return { name, url: `${baseUrl}${PAYMENT_WEBHOOK_PATH}${query}`, method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': signature }, body: payload, status };
    }),
  );
  const sms = (name: string, text: string): PreparedRequest => {
    const form = smsForm(owner, text);
    const signature = twilio.getExpectedTwilioSignature(TWILIO_TOKENS[0], `${PUBLIC_BASE_URL}${SMS_WEBHOOK_PATH}${query}`, form);
    return { name, url: `${baseUrl}${SMS_WEBHOOK_PATH}${query}`, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature }, body: new URLSearchParams(form).toString(), status: 200 };
  };
  // A client's longest accepted message (1600 emoji, a ~19 KiB form, stored as a draft) and the largest form, refused as too long.
  const texts = Array.from({ length: PER_KIND }, () => [sms('longest draft', '🍞'.repeat(1600)), sms('too long', 'x'.repeat(SMS_BODY_LIMIT_BYTES - 1024))]).flat();
  // Interleaved, so that every kind runs throughout.
  return Array.from({ length: PER_KIND }, (_, i) => [...STRIPE_BODIES.map((_b, k) => stripe[k * PER_KIND + i]!), texts[2 * i]!, texts[2 * i + 1]!]).flat();
}

/** The service under its worst requests. */
export interface WebhooksUnderAttack {
  baseUrl: string;
  /** The phone number of the client the SMS come from. */
  owner: string;
  pid: number;
  /** Another caller: an unlisted payment provider event (signature, envelope, ignored) or an SMS asking for the commands; throws unless answered so. */
  probe(): Promise<void>;
  /** A caller sending every hostile request in turn from a worker thread (off the probes' event loop). */
  attacker(): HostileWorker;
  close(): Promise<void>;
}

/**
 * The service as a process of its own (from its build, `node dist/main.js`), on the test
 * environment's dependencies: the figures are its event loop's, not the caller's.
 */
export async function startWebhooksUnderAttack(): Promise<WebhooksUnderAttack> {
  const deps = await startDependencies();
  let service: ServiceProcess | undefined;
  try {
    const env = { ...testEnvironment(deps), Webhooks__Port: '0', Webhooks__Host: '127.0.0.1', Management__Port: '0', Log__Level: 'info' };
    service = await startService({ name: 'webhooks', cwd: npmStart('webhooks').cwd, args: ['dist/main.js'], env });
  } catch (err) {
    await deps.close();
    throw err;
  }
  const running = service;
  const baseUrl = `http://127.0.0.1:${running.port!}`;
  const owner = freshPhone();
  deps.gateway.addClient({ number: 8, name: 'Hostile Shop', phoneNumber: owner });
  let probes = 0;
  return {
    baseUrl,
    owner,
    pid: running.pid,
    async probe() {
      if (++probes % 2 === 0) {
        const answer = await postSms(baseUrl, smsForm(freshPhone(), 'COMMANDS'));
        if (!/^Commands:/.test(replyText(answer) ?? '')) throw new Error(`COMMANDS answered ${answer.status}: ${answer.text}`);
        return;
      }
      const answer = await postStripeEvent(baseUrl, stripeEvent('customer.updated', { id: 'cus_1', object: 'customer' }), { secret: STRIPE_SECRETS[1] });
      const { received, result, ...rest } = answer.json ?? {};
      if (received !== true || result !== 'ignored' || Object.keys(rest).length > 0) throw new Error(`an unlisted event answered ${answer.status}: ${answer.text}`);
    },
    attacker: () => hostileWorker(PREPARED_REQUESTS, { requests: hostileRequests(baseUrl, owner) }),
    async close() {
      await running.stop();
      await deps.close();
    },
  };
}
