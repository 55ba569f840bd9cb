// The end-to-end journey of the platform, shared by `make demo` (scripts/demo.ts, against `make up`)
// and the end-to-end suite (journey.test.ts, against instances of its own): OTP login with the code
// read from Kafka, forward-auth, the graph registry, a signed Stripe checkout event, an SMS
// announcement to the subscribers, and (where Keycloak can reach the auth service) a sign-out in
// Keycloak ending the session. Each step checks what it must see and says what it did; the
// record it returns holds every answer and event, for the suite to assert on in detail.
import { randomUUID } from 'node:crypto';
import Stripe from 'stripe';
import twilio from 'twilio';
import { stripeEvent } from '../support/stripe-event.js';
import { tailEvents, type EventTail, type TailedEvent } from './event-tail.js';
import {
  check,
  http,
  httpsClient,
  jwtClaims,
  keycloakSignOut,
  keycloakUserinfo,
  keycloakUsers,
  parseSetCookie,
  redact,
  statusLine,
  twimlMessage,
  type HttpAnswer,
  type HttpsClient,
  type KeycloakAdminSettings,
  type KeycloakUserView,
  type SetCookie,
} from './journey-support.js';

export const PAYMENT_WEBHOOK_PATH = '/api/PaymentProviderWebhookHandler';
export const SMS_WEBHOOK_PATH = '/api/SmsProviderWebhookHandler';

/** Where the platform is and the secrets its callers hold. */
export interface JourneyTargets {
  /** `ca`: the certificate (or the CA's, `make up`: test/infra/local-ca.sh) to trust; none: not verified. */
  auth: { url: string; ca?: string };
  registry: { url: string; apiKey: string };
  webhooks: { url: string; publicBaseUrl: string; apiKey: string; stripeWebhookSecret: string; twilioAuthToken: string; twilioAccountSid: string };
  stripe: { apiUrl: string; apiKey: string };
  kafka: { brokers: readonly string[]; topics: { notifications: string; userAuthentication: string; payments: string } };
  /** When given, step 1 also looks the new user up in Keycloak (admin API). */
  keycloak?: KeycloakAdminSettings;
  /**
   * With `keycloak`: step 6 signs the user out in Keycloak (admin API) and expects the session to
   * end within SIGN_OUT_WITHIN_MS. Needs the auth service's Keycloak client to carry a back-channel
   * logout URL that reaches it over TLS Keycloak trusts (`make up`: test/infra/local-ca.sh).
   */
  backchannelLogout?: boolean;
}

/** The services' default topics (chart values and `make up` alike). */
export const DEFAULT_TOPICS: JourneyTargets['kafka']['topics'] = { notifications: 'notifications', userAuthentication: 'user-authentication', payments: 'Payments' };

/** What the journey does: who logs in, what it registers, who announces what to whom. */
export interface JourneyPlan {
  /** The E.164 number that logs in (as a client). */
  phoneNumber: string;
  graph: { name: string; url: string; schema: string };
  /** The platform client that pays and announces (known to the gateway by both). */
  client: { phoneNumber: string; providerCustomerId: string };
  /** The client's subscribers as the gateway has them. */
  subscribers: ReadonlyArray<{ phoneNumber: string; locale: string }>;
  /** The announcement text; make it unique to the run, the events are told apart by it. */
  announcement: string;
}

export interface LoginRecord {
  otp: HttpAnswer;
  smsEvent: TailedEvent;
  code: string;
  verify: HttpAnswer;
  cookie: SetCookie;
  loggedInEvent: TailedEvent;
  keycloakUser: KeycloakUserView | undefined;
}

export interface ForwardAuthRecord {
  answer: HttpAnswer;
  accessToken: string;
  /** With JourneyTargets.keycloak: Keycloak's userinfo answer to the token (a live token of the user). */
  userinfo?: { status: number; claims: Record<string, unknown> };
}

export interface RegistryRecord {
  registerGraph: HttpAnswer;
  storeSchema: HttpAnswer;
  graphs: Record<string, string>;
  schema: string;
}

export interface PaymentRecord {
  checkoutSessionId: string;
  eventId: string;
  answer: HttpAnswer;
  paymentConfirmedEvent: TailedEvent;
}

export interface AnnouncementRecord {
  draft: HttpAnswer;
  draftReply: string;
  confirm: HttpAnswer;
  confirmReply: string;
  /** The MessageSid of the draft SMS (the events' ce_id is `{draft MessageSid}:{phone}`). */
  draftMessageSid: string;
  notifications: TailedEvent[];
}

export interface SignOutRecord {
  /** The admin API's answer to the sign-out (204). */
  signOutStatus: number;
  /** How long Keycloak took to answer the sign-out (it posts its Logout Tokens meanwhile). */
  keycloakMs: number;
  /** GET /auth with the session's cookie once it answered 401. */
  answer: HttpAnswer;
  /** From asking Keycloak to sign the user out to that 401. */
  endedAfterMs: number;
}

export interface JourneyFailure {
  step: number;
  title: string;
  error: Error;
}

export interface JourneyRecord {
  login?: LoginRecord;
  forwardAuth?: ForwardAuthRecord;
  registry?: RegistryRecord;
  payment?: PaymentRecord;
  announcement?: AnnouncementRecord;
  signOut?: SignOutRecord;
  /** Steps that failed or were skipped (a skipped step's error says which step it needed). */
  failures: JourneyFailure[];
  /** Every event published on the journey's topics while it ran (other publishers' included). */
  events: readonly TailedEvent[];
}

/** Told about each step as it goes (the demo prints; the suite may stay silent). */
export interface JourneyReporter {
  start(step: number, total: number, title: string): void;
  /** One line of what the step did or saw; secrets already redacted. */
  saw(line: string): void;
  done(step: number, elapsedMs: number): void;
  failed(step: number, error: Error): void;
}

export const silentReporter: JourneyReporter = { start: () => undefined, saw: () => undefined, done: () => undefined, failed: () => undefined };

interface Context {
  targets: JourneyTargets;
  plan: JourneyPlan;
  tail: EventTail;
  auth: HttpsClient;
  saw: (line: string) => void;
}

const json = (answer: HttpAnswer): Record<string, unknown> => {
  try {
    return JSON.parse(answer.text) as Record<string, unknown>;
  } catch {
    return {};
  }
};

/** ce_type, ce_id and trace context of an event, for the step lines. */
function describeEvent(event: TailedEvent): string {
  const trace = event.headers.traceparent === undefined ? 'no traceparent (tracing off)' : `traceparent ${event.headers.traceparent}`;
  return `${event.headers.ce_type ?? '(no ce_type)'} on ${event.topic} (ce_id ${event.headers.ce_id ?? '-'}, ${trace})`;
}

// Step 1 -------------------------------------------------------------------------------------

async function requestCode(ctx: Context): Promise<{ otp: HttpAnswer; smsEvent: TailedEvent; code: string }> {
  const { phoneNumber } = ctx.plan;
  const otp = await ctx.auth.request('/otp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber }) });
  check(otp.status === 200, `POST /otp answered ${statusLine(otp)}`);
  const development = json(otp).code !== undefined;
  ctx.saw(`POST /otp {"phoneNumber":"${phoneNumber}"} → 200${development ? ' (development mode: the answer carries the code too, not used here)' : ''}`);
  const topic = ctx.targets.kafka.topics.notifications;
  const smsEvent = await ctx.tail.waitFor('the login code SMS', (event) => event.topic === topic && event.key === phoneNumber && event.value.resourceKey === 'Otp.LoginCode');
  const code = String(smsEvent.value.code);
  check(/^\d{6}$/.test(code), `the SMS event carries no 6-digit code: ${JSON.stringify(Object.keys(smsEvent.value))}`);
  ctx.saw(`OTP code [REDACTED] read from Kafka topic ${topic}: ${describeEvent(smsEvent)}`);
  return { otp, smsEvent, code };
}

async function verifyCode(ctx: Context, code: string): Promise<{ verify: HttpAnswer; cookie: SetCookie }> {
  const body = JSON.stringify({ phoneNumber: ctx.plan.phoneNumber, code });
  const verify = await ctx.auth.request('/otp/verify', { method: 'POST', headers: { 'content-type': 'application/json', 'x-role-claim': 'client' }, body });
  check(verify.status === 200, `POST /otp/verify answered ${statusLine(verify)}`);
  const header = verify.cookies.find((candidate) => candidate.startsWith('TokenId='));
  check(header !== undefined, `POST /otp/verify set no TokenId cookie (Set-Cookie: ${verify.cookies.length})`);
  const cookie = parseSetCookie(header);
  check(cookie.attributes.httponly === true && cookie.attributes.secure === true, 'the TokenId cookie is not HttpOnly and Secure');
  const attributes = header.split(';').slice(1).map((part) => part.trim());
  ctx.saw(`POST /otp/verify (X-Role-Claim: client) → 200, cookie TokenId=${redact(cookie.value)} set (${attributes.join(', ')})`);
  return { verify, cookie };
}

async function provisionedUser(ctx: Context): Promise<KeycloakUserView | undefined> {
  if (ctx.targets.keycloak === undefined) return undefined;
  const users = await keycloakUsers(ctx.targets.keycloak, ctx.plan.phoneNumber);
  check(users.length === 1, `Keycloak has ${users.length} users named ${ctx.plan.phoneNumber}`);
  const user = users[0]!;
  check(user.groups.includes('clients'), `the Keycloak user is in groups [${user.groups.join(', ')}], not clients`);
  ctx.saw(`Keycloak user ${user.username} (id ${user.id}) in group(s) ${user.groups.join(', ')}, phoneNumber ${user.attributes.phoneNumber?.join(', ') ?? '(none)'}`);
  return user;
}

async function otpLogin(ctx: Context): Promise<LoginRecord> {
  const { otp, smsEvent, code } = await requestCode(ctx);
  const { verify, cookie } = await verifyCode(ctx, code);
  const topic = ctx.targets.kafka.topics.userAuthentication;
  const loggedInEvent = await ctx.tail.waitFor('UserLoggedInEvent', (event) => event.topic === topic && event.key === ctx.plan.phoneNumber);
  ctx.saw(`${describeEvent(loggedInEvent)}: userId ${String(loggedInEvent.value.userId)}, role ${String(loggedInEvent.value.role)}, method ${String(loggedInEvent.value.method)}`);
  const keycloakUser = await provisionedUser(ctx);
  return { otp, smsEvent, code, verify, cookie, loggedInEvent, keycloakUser };
}

// Step 2 -------------------------------------------------------------------------------------

async function forwardAuth(ctx: Context, login: LoginRecord | undefined): Promise<ForwardAuthRecord> {
  check(login !== undefined, 'skipped: needs the cookie of step 1');
  const answer = await ctx.auth.request('/auth', { headers: { cookie: `TokenId=${login.cookie.value}` } });
  check(answer.status === 200, `GET /auth answered ${statusLine(answer)}`);
  const accessToken = /^Bearer (\S+)$/.exec(answer.headers.get('authorization') ?? '')?.[1];
  check(accessToken !== undefined, 'GET /auth answered 200 without Authorization: Bearer');
  ctx.saw(`GET /auth with the TokenId cookie → 200 Authorization: Bearer ${redact(accessToken)}`);
  const claims = jwtClaims(accessToken);
  const expiresIn = typeof claims.exp === 'number' ? `${Math.round(claims.exp - Date.now() / 1000)} s` : '?';
  ctx.saw(`access token of ${String(claims.preferred_username)} issued by ${String(claims.iss)} to ${String(claims.azp)}, expires in ${expiresIn}`);
  if (ctx.targets.keycloak === undefined) return { answer, accessToken };
  const userinfo = await keycloakUserinfo(ctx.targets.keycloak, accessToken);
  check(userinfo.status === 200, `Keycloak's userinfo answered ${userinfo.status} to the access token`);
  ctx.saw(`Keycloak's userinfo with that token → 200, sub ${String(userinfo.claims.sub)}: a live token of the user`);
  return { answer, accessToken, userinfo };
}

// Step 3 -------------------------------------------------------------------------------------

async function graphRegistry(ctx: Context): Promise<RegistryRecord> {
  const { url, apiKey } = ctx.targets.registry;
  const { name, url: graphUrl, schema: sdl } = ctx.plan.graph;
  const headers = { 'x-api-key': apiKey };
  const registerGraph = await http(`${url}/${encodeURIComponent(name)}`, { method: 'POST', headers: { ...headers, 'content-type': 'text/plain' }, body: graphUrl });
  check(registerGraph.status === 204, `POST /${name} answered ${statusLine(registerGraph)}`);
  ctx.saw(`POST /${name} ${graphUrl} → 204`);
  const storeSchema = await http(`${url}/schema`, { method: 'POST', headers: { ...headers, 'content-type': 'application/graphql' }, body: sdl });
  // 201: a new schema version (issue 30); the SDL carries the run id, so it is never the newest already.
  check(storeSchema.status === 201, `POST /schema answered ${statusLine(storeSchema)}`);
  ctx.saw(`POST /schema (${Buffer.byteLength(sdl)} bytes of SDL) → ${storeSchema.status}`);
  const list = await http(`${url}/`, { headers });
  check(list.status === 200, `GET / answered ${statusLine(list)}`);
  const graphs = (json(list).graphs ?? {}) as Record<string, string>;
  check(graphs[name] === graphUrl, `GET / lists ${name} as ${String(graphs[name])}`);
  ctx.saw(`GET / → 200, ${Object.keys(graphs).length} graph(s), ${name} → ${graphs[name]}`);
  const stored = await http(`${url}/schema`, { headers });
  check(stored.status === 200 && stored.text === sdl, `GET /schema answered ${stored.status} with ${stored.text === sdl ? 'the' : 'another'} schema`);
  ctx.saw(`GET /schema → 200, the schema as stored (${Buffer.byteLength(stored.text)} bytes)`);
  return { registerGraph, storeSchema, graphs, schema: stored.text };
}

// Step 4 -------------------------------------------------------------------------------------

const uid = (): string => randomUUID().replace(/-/g, '').slice(0, 16);

async function createCheckoutSession(ctx: Context): Promise<Stripe.Checkout.Session> {
  const api = new URL(ctx.targets.stripe.apiUrl);
  const stripe = new Stripe(ctx.targets.stripe.apiKey, { host: api.hostname, port: Number(api.port), protocol: api.protocol === 'https:' ? 'https' : 'http', telemetry: false });
  const session = await stripe.checkout.sessions.create({
    mode: 'subscription',
    customer: ctx.plan.client.providerCustomerId,
    line_items: [{ price: `price_${uid()}`, quantity: 1 }],
    success_url: 'http://localhost:3000/thanks',
  });
  ctx.saw(`checkout session ${session.id} created in stripe-mock (customer ${typeof session.customer === 'string' ? session.customer : (session.customer?.id ?? 'none')})`);
  return session;
}

/** The event Stripe sends when the customer has paid: the session as completed and paid. */
function checkoutCompleted(session: Stripe.Checkout.Session): Record<string, unknown> {
  const object = { ...session, status: 'complete', payment_status: 'paid', amount_subtotal: 1000, amount_total: 1000, currency: 'usd', invoice: `in_${uid()}`, subscription: `sub_${uid()}` };
  return stripeEvent('checkout.session.completed', object, `evt_${uid()}`);
}

async function stripeCheckout(ctx: Context): Promise<PaymentRecord> {
  const session = await createCheckoutSession(ctx);
  const event = checkoutCompleted(session);
  const payload = JSON.stringify(event, null, 2);
  const { url, apiKey, stripeWebhookSecret } = ctx.targets.webhooks;
  const signature = Stripe.webhooks.generateTestHeaderString({ payload, secret: stripeWebhookSecret });
  const answer = await http(`${url}${PAYMENT_WEBHOOK_PATH}?code=${encodeURIComponent(apiKey)}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json; charset=utf-8', 'stripe-signature': signature },
    body: payload,
  });
  check(answer.status === 200 && json(answer).result === 'processed', `the webhook answered ${statusLine(answer)}`);
  ctx.saw(`POST ${PAYMENT_WEBHOOK_PATH}?code=[REDACTED] checkout.session.completed ${String(event.id)} (signed, Stripe-Signature) → 200 ${answer.text}`);
  const topic = ctx.targets.kafka.topics.payments;
  const paymentConfirmedEvent = await ctx.tail.waitFor('PaymentConfirmedEvent', (candidate) => candidate.topic === topic && candidate.key === session.id);
  const data = paymentConfirmedEvent.value;
  ctx.saw(`${describeEvent(paymentConfirmedEvent)}: PaymentConfirmation ${String(data.paymentConfirmationId)}, PlanSubscription ${String(data.planSubscriptionId)} (plan ${String(data.planId)}, client ${String(data.clientId)}), ${String(data.amount)} ${String(data.currency)}`);
  return { checkoutSessionId: session.id, eventId: String(event.id), answer, paymentConfirmedEvent };
}

// Step 5 -------------------------------------------------------------------------------------

/** A text from `from` to the webhooks service as Twilio sends it (signed): the answer, its TwiML reply and the MessageSid. */
export async function smsToWebhooks(webhooks: JourneyTargets['webhooks'], from: string, body: string): Promise<{ answer: HttpAnswer; reply: string; sid: string }> {
  const { url, publicBaseUrl, apiKey, twilioAuthToken, twilioAccountSid } = webhooks;
  const query = `?code=${encodeURIComponent(apiKey)}`;
  const sid = `SM${randomUUID().replace(/-/g, '')}`;
  const params = { ToCountry: 'US', SmsMessageSid: sid, NumMedia: '0', From: from, To: '+15559990000', Body: body, AccountSid: twilioAccountSid, MessageSid: sid, NumSegments: '1', ApiVersion: '2010-04-01' };
  const signature = twilio.getExpectedTwilioSignature(twilioAuthToken, `${publicBaseUrl}${SMS_WEBHOOK_PATH}${query}`, params);
  const answer = await http(`${url}${SMS_WEBHOOK_PATH}${query}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: new URLSearchParams(params).toString(),
  });
  const reply = answer.status === 200 ? twimlMessage(answer.text) : undefined;
  check(reply !== undefined, `the SMS webhook answered ${statusLine(answer)}`);
  return { answer, reply, sid };
}

async function sendSms(ctx: Context, body: string): Promise<{ answer: HttpAnswer; reply: string; sid: string }> {
  const sent = await smsToWebhooks(ctx.targets.webhooks, ctx.plan.client.phoneNumber, body);
  ctx.saw(`SMS from ${ctx.plan.client.phoneNumber} "${body}" (signed, X-Twilio-Signature) → 200, reply "${sent.reply}"`);
  return sent;
}

async function announcement(ctx: Context): Promise<AnnouncementRecord> {
  const { subscribers, announcement: text } = ctx.plan;
  const draft = await sendSms(ctx, text);
  check(/CONFIRM/.test(draft.reply), 'the reply to the announcement does not ask for CONFIRM');
  const confirm = await sendSms(ctx, 'CONFIRM');
  const reached = `sent to ${subscribers.length} ${subscribers.length === 1 ? 'subscriber' : 'subscribers'}`;
  check(confirm.reply.includes(reached), `the reply to CONFIRM does not say "${reached}"`);
  const topic = ctx.targets.kafka.topics.notifications;
  const phones = new Set(subscribers.map((subscriber) => subscriber.phoneNumber));
  const ours = (event: TailedEvent): boolean =>
    event.topic === topic && phones.has(event.key ?? '') && event.value.resourceKey === 'Announcement' && String(event.value.text).includes(text);
  const notifications = await ctx.tail.waitForAll('the announcement SMS events', subscribers.length, ours);
  for (const subscriber of subscribers) {
    const event = notifications.find((candidate) => candidate.key === subscriber.phoneNumber);
    check(event !== undefined, `no announcement event for ${subscriber.phoneNumber}`);
    check(event.value.locale === subscriber.locale, `the announcement to ${subscriber.phoneNumber} is in ${String(event.value.locale)}, not ${subscriber.locale}`);
    ctx.saw(`${describeEvent(event)} to ${subscriber.phoneNumber} [${subscriber.locale}]: "${String(event.value.text)}"`);
  }
  return { draft: draft.answer, draftReply: draft.reply, confirm: confirm.answer, confirmReply: confirm.reply, draftMessageSid: draft.sid, notifications };
}

// Step 6 -------------------------------------------------------------------------------------

/**
 * How soon a sign-out in Keycloak ends the session on the auth service (back-channel logout),
 * counted from Keycloak's answer: by then it has ended the user's sessions and posted its Logout
 * Tokens. Keycloak's own time to answer is its speed, which a busy machine stretches (issue 40),
 * so it is reported beside, not counted in.
 */
export const SIGN_OUT_WITHIN_MS = 2000;

async function keycloakSignOutEnds(ctx: Context, login: LoginRecord | undefined): Promise<SignOutRecord> {
  const settings = ctx.targets.keycloak;
  const user = login?.keycloakUser;
  check(login !== undefined && user !== undefined && settings !== undefined, 'skipped: needs the cookie and the Keycloak user of step 1');
  const cookie = { cookie: `TokenId=${login.cookie.value}` };
  const before = await ctx.auth.request('/auth', { headers: cookie });
  check(before.status === 200, `GET /auth before the sign-out answered ${statusLine(before)}`);
  const { status: signOutStatus, askedAt } = await keycloakSignOut(settings, user.id);
  const started = performance.now();
  const keycloakMs = started - askedAt;
  check(signOutStatus === 204, `Keycloak's admin API answered ${signOutStatus} to the sign-out`);
  ctx.saw(
    `Keycloak admin API: POST /admin/realms/${settings.realm}/users/${user.id}/logout → 204 in ${Math.round(keycloakMs)} ms: Keycloak ends the user's sessions and posts a Logout Token to the auth service's /backchannel-logout`,
  );
  let answer = await ctx.auth.request('/auth', { headers: cookie });
  while (answer.status !== 401 && performance.now() - started < SIGN_OUT_WITHIN_MS) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    answer = await ctx.auth.request('/auth', { headers: cookie });
  }
  const endedAfterMs = performance.now() - started;
  check(
    answer.status === 401,
    `GET /auth still answered ${statusLine(answer)} ${Math.round(endedAfterMs)} ms after Keycloak signed the user out (Keycloak's log says whether its back-channel logout reached the auth service)`,
  );
  ctx.saw(`GET /auth with the same cookie → 401 ${Math.round(endedAfterMs)} ms after Keycloak answered the sign-out: the session has ended`);
  return { signOutStatus, keycloakMs, answer, endedAfterMs };
}

// Runner -------------------------------------------------------------------------------------

const STEP_OF = { login: 1, forwardAuth: 2, registry: 3, payment: 4, announcement: 5, signOut: 6 } as const;

/** A step's record, or an error naming why that step failed (for assertions on one step). */
export function stepRecord<K extends keyof typeof STEP_OF>(record: JourneyRecord, key: K): NonNullable<JourneyRecord[K]> {
  const value = record[key];
  if (value === undefined) {
    const step = STEP_OF[key];
    throw new Error(`journey step ${step} failed: ${record.failures.find((failure) => failure.step === step)?.error.message ?? 'no record'}`);
  }
  return value;
}

export const STEP_TITLES = [
  'OTP login as a client (code read from Kafka)',
  'Forward-auth with the TokenId cookie',
  'Graph registry: register a graph and the schema, read them back',
  'Signed Stripe checkout.session.completed',
  'SMS announcement to the subscribers, localized',
  'Sign-out in Keycloak ends the session (back-channel logout)',
] as const;

/** How many steps a journey to these targets runs: the sign-out only where Keycloak can reach the auth service. */
export function journeySteps(targets: JourneyTargets): number {
  return targets.keycloak !== undefined && targets.backchannelLogout === true ? STEP_TITLES.length : STEP_TITLES.length - 1;
}

/**
 * Runs the steps in order (journeySteps). A failing step is recorded and reported, and the journey goes on
 * with the steps that do not need it; the record lists every failure.
 */
export async function runJourney(targets: JourneyTargets, plan: JourneyPlan, reporter: JourneyReporter = silentReporter): Promise<JourneyRecord> {
  const { notifications, userAuthentication, payments } = targets.kafka.topics;
  const tail = await tailEvents(targets.kafka.brokers, [...new Set([notifications, userAuthentication, payments])]);
  const auth = httpsClient(targets.auth.url, targets.auth.ca);
  const ctx: Context = { targets, plan, tail, auth, saw: (line) => reporter.saw(line) };
  const failures: JourneyFailure[] = [];
  const step = async <T>(index: number, run: () => Promise<T>): Promise<T | undefined> => {
    const title = STEP_TITLES[index - 1]!;
    reporter.start(index, journeySteps(targets), title);
    const started = Date.now();
    try {
      const result = await run();
      reporter.done(index, Date.now() - started);
      return result;
    } catch (err) {
      const error = err instanceof Error ? err : new Error(String(err));
      failures.push({ step: index, title, error });
      reporter.failed(index, error);
      return undefined;
    }
  };
  try {
    const login = await step(1, () => otpLogin(ctx));
    const forward = await step(2, () => forwardAuth(ctx, login));
    const registry = await step(3, () => graphRegistry(ctx));
    const payment = await step(4, () => stripeCheckout(ctx));
    const announced = await step(5, () => announcement(ctx));
    const signOut = journeySteps(targets) === STEP_OF.signOut ? await step(6, () => keycloakSignOutEnds(ctx, login)) : undefined;
    return { login, forwardAuth: forward, registry, payment, announcement: announced, signOut, failures, events: tail.events };
  } finally {
    await auth.close();
    await tail.close();
  }
}
