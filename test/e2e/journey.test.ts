// The end-to-end journey of issue 9 against the four services started from their builds as child
// processes (free ports), Hive Gateway on the registry's supergraph of the subgraph fixtures and the
// localization fixture with the demo data, and the shared
// Redis, Kafka, Keycloak and stripe-mock; every service exports its spans to a receiver in this test.
// The services run from dist/: `make test` builds first; alone, run `npx tsc --build` before it.
import { randomInt, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import type { PlatformEventType } from '@sp/messaging';
import { parse } from 'yaml';
import { demoData } from '../../scripts/local-platform.js';
import { expectEventPayload } from '../support/asyncapi-contract.js';
import { gatewayContractSdl } from '../support/graphql-gateway.js';
import { fixtureTranslation } from '../support/localization-service.js';
import { SUBGRAPH_NAMES } from '../support/subgraph-fixtures.js';
import type { TailedEvent } from './event-tail.js';
import { stepRecord, SIGN_OUT_WITHIN_MS, SMS_WEBHOOK_PATH, PAYMENT_WEBHOOK_PATH, type JourneyPlan, type JourneyRecord } from './journey.js';
import { runJourneyOn, type JourneyRun } from './journey-run.js';
import { jwtClaims } from './journey-support.js';
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../support/otlp-receiver.js';
import type { ServiceExit } from '../support/service-process.js';
import { startTestPlatform, type TestPlatform } from './test-platform.js';
import { cacheCallsUnder, parseTraceparent, producerSpanOf, serverSpans } from './traces.js';
import { HANG_GUARD_MS } from '../support/progress.js';

const run = randomUUID().slice(0, 8);
const plan: JourneyPlan = {
  // A fresh valid German mobile number (libphonenumber refuses the 555 numbers), so runs never meet.
  phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
  graph: { name: `e2e-journey-${run}`, url: '', schema: `# registered by the end-to-end journey ${run}\n${gatewayContractSdl}` },
  client: demoData.client,
  subscribers: demoData.subscribers,
  announcement: `Demo Fitness: yoga moves to 7 pm on Friday (run ${run})`,
};

/** The CloudEvents headers of docs/asyncapi.yaml (the `cloudEvent` message trait). */
const asyncapi = parse(readFileSync(fileURLToPath(new URL('../../docs/asyncapi.yaml', import.meta.url)), 'utf8')) as {
  components: { messageTraits: { cloudEvent: { headers: object } } };
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormatsModule.default(ajv);
const validateHeaders = ajv.compile(asyncapi.components.messageTraits.cloudEvent.headers);

let otlp: OtlpReceiver | undefined;
let platform: TestPlatform | undefined;
let record: JourneyRecord;
let journey: JourneyRun | undefined;

beforeAll(async () => {
  otlp = await startOtlpReceiver();
  platform = await startTestPlatform({ otlpEndpoint: otlp.url });
  journey = await runJourneyOn(platform, plan);
  record = journey.record;
}, HANG_GUARD_MS);

afterAll(async () => {
  // Every service is stopped even when a test (or the start) failed.
  await platform?.stop();
  await otlp?.close();
  await journey?.cleanUp();
}, 30_000);

describe('the platform end to end', () => {
  it('should complete every step of the journey', () => {
    const failures = record.failures.map(({ step, title, error }) => `${step}. ${title}: ${error.message}`);
    if (failures.length > 0) failures.push(`service logs: ${Object.values(platform!.services).map((service) => service.logFile).join(', ')}`);
    expect(failures).toEqual([]);
  });

  it('should log in by the code from the SMS event, set the TokenId cookie and provision the Keycloak user in group clients', () => {
    const login = stepRecord(record, 'login');
    expect(login.otp.status).toBe(200);
    expect(JSON.parse(login.otp.text)).toEqual({}); // Production: the code travels only in the event
    expect(login.smsEvent.value).toEqual({ phoneNumber: plan.phoneNumber, resourceKey: 'Otp.LoginCode', code: login.code, locale: 'en' });
    expect(login.verify.status).toBe(200);
    expect(login.cookie.name).toBe('TokenId');
    expect(login.cookie.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(login.cookie.attributes).toMatchObject({ httponly: true, secure: true, samesite: 'Lax', path: '/' });
    expect(Number(login.cookie.attributes['max-age'])).toBeGreaterThan(0);
    expect(login.verify.text).not.toContain(login.cookie.value);
    const user = login.keycloakUser!;
    expect(user.username).toBe(plan.phoneNumber);
    expect(user.groups).toEqual(['clients']);
    expect(user.attributes.phoneNumber).toEqual([plan.phoneNumber]);
    expect(login.loggedInEvent.value).toEqual({ phoneNumber: plan.phoneNumber, locale: 'en', userId: user.id, method: 'otp', role: 'client' });
  });

  it('should answer forward-auth with a live Keycloak access token of that user', () => {
    const forward = stepRecord(record, 'forwardAuth');
    const claims = jwtClaims(forward.accessToken);
    expect(claims).toMatchObject({ preferred_username: plan.phoneNumber, azp: platform!.authClientId });
    expect(String(claims.iss)).toBe(`${platform!.targets.keycloak!.url}/realms/${platform!.targets.keycloak!.realm}`);
    // Live when the journey asked (its last step signs the user out of Keycloak).
    expect(forward.userinfo).toEqual({ status: 200, claims: expect.objectContaining({ sub: stepRecord(record, 'login').keycloakUser!.id, phone_number: plan.phoneNumber }) });
  });

  it('should keep the graph and the schema in the registry, as records graph:{name} and graph:schema in Redis', async () => {
    const registry = stepRecord(record, 'registry');
    expect([registry.registerGraph.status, registry.storeSchema.status]).toEqual([204, 201]); // the schema: a new version (its SDL carries the run id)
    expect(registry.graphs[plan.graph.name]).toBe(plan.graph.url);
    expect(registry.schema).toBe(plan.graph.schema);
    expect(await journey!.registryRedis.get(`graph:${plan.graph.name}`)).toBe(plan.graph.url);
    expect(await journey!.registryRedis.get('graph:schema')).toBe(plan.graph.schema);
  });

  it('should create exactly one PaymentConfirmation and one PlanSubscription through the gateway and publish PaymentConfirmedEvent', () => {
    const payment = stepRecord(record, 'payment');
    const gateway = platform!.gateway;
    const [planRecord] = gateway.data.plans;
    expect(gateway.mutations().map((operation) => operation.fields)).toEqual([['createPaymentConfirmation'], ['createPlanSubscription']]);
    expect(gateway.data.paymentConfirmations).toEqual([
      expect.objectContaining({ checkoutSessionId: payment.checkoutSessionId, clientId: platform!.client.id, planId: planRecord!.id, amount: 1000, currency: 'usd' }),
    ]);
    expect(gateway.data.planSubscriptions).toEqual([expect.objectContaining({ checkoutSessionId: payment.checkoutSessionId, clientId: platform!.client.id, planId: planRecord!.id })]);
    expect(payment.paymentConfirmedEvent.value).toMatchObject({
      checkoutSessionId: payment.checkoutSessionId,
      clientId: platform!.client.id,
      planId: planRecord!.id,
      paymentConfirmationId: gateway.data.paymentConfirmations[0]!.id,
      planSubscriptionId: gateway.data.planSubscriptions[0]!.id,
      providerCustomerId: demoData.client.providerCustomerId,
      amount: 1000,
      currency: 'usd',
    });
    // One payment per checkout session: the event's id derives from the session, not from the Stripe event.
    expect(payment.paymentConfirmedEvent.headers.ce_id).toBe(`PaymentConfirmedEvent:${payment.checkoutSessionId}`);
  });

  it('should make those gateway calls through Hive Gateway on the supergraph the registry composed of the user, product and payment subgraphs', async () => {
    const services = await fetch(`${platform!.targets.registry.url}/artifacts/v1/default/services`, { headers: { 'x-hive-cdn-key': platform!.registryCdnKey } });
    expect(services.status).toBe(200);
    const { subgraphs } = platform!.gateway;
    const listed = ((await services.json()) as Array<{ name: string; url: string }>).map(({ name, url }) => [name, url]);
    expect(listed.sort()).toEqual(SUBGRAPH_NAMES.map((name) => [name, subgraphs.servers[name].url]).sort());
    // The webhooks' Keycloak token reached the subgraphs: Hive Gateway forwarded it on every call.
    expect(subgraphs.tokens).toMatchObject({ refused: 0 });
    expect(subgraphs.tokens.accepted).toBeGreaterThan(0);
  });

  it('should send the announcement to both subscribers, each in its locale', () => {
    const announcement = stepRecord(record, 'announcement');
    expect(announcement.draftReply).toMatch(/Text CONFIRM to send it/);
    expect(announcement.confirmReply).toBe('Your announcement was sent to 2 subscribers.');
    const sent = record.events.filter((event) => event.value.resourceKey === 'Announcement' && String(event.value.text).includes(plan.announcement));
    expect(sent.map((event) => [event.key, event.value]).sort()).toEqual(
      demoData.subscribers.map(({ phoneNumber, locale }) => [phoneNumber, { phoneNumber, resourceKey: 'Announcement', text: fixtureTranslation(plan.announcement, locale), locale }]),
    );
    expect(sent.map((event) => event.headers.ce_id).sort()).toEqual(demoData.subscribers.map(({ phoneNumber }) => `${announcement.draftMessageSid}:${phoneNumber}`));
    expect(platform!.localization.requests.map((request) => request.targetLocale).sort()).toEqual(['de', 'fr']);
  });

  it(`should end the session within ${SIGN_OUT_WITHIN_MS} ms of Keycloak's answer to a sign-out: its back-channel logout reaches the auth service over TLS it trusts`, () => {
    const signOut = stepRecord(record, 'signOut');
    expect(signOut.signOutStatus).toBe(204);
    expect(signOut.answer.status).toBe(401);
    expect(signOut.endedAfterMs).toBeLessThan(SIGN_OUT_WITHIN_MS);
  });

  it('should publish every event once, with CloudEvents headers, trace context and a payload as docs/asyncapi.yaml describes', () => {
    const login = stepRecord(record, 'login');
    const announcement = stepRecord(record, 'announcement');
    const ours: Array<[TailedEvent, PlatformEventType, string]> = [
      [login.smsEvent, 'SendSmsNotificationEvent', 'auth'],
      [login.loggedInEvent, 'UserLoggedInEvent', 'auth'],
      [stepRecord(record, 'payment').paymentConfirmedEvent, 'PaymentConfirmedEvent', 'webhooks'],
      ...announcement.notifications.map((event): [TailedEvent, PlatformEventType, string] => [event, 'SendSmsNotificationEvent', 'webhooks']),
    ];
    for (const [event, type, service] of ours) {
      expect(validateHeaders(event.headers) ? [] : validateHeaders.errors).toEqual([]);
      expect(event.headers).toMatchObject({ ce_specversion: '1.0', ce_type: type, ce_source: `/subscription-platform/${service}`, 'content-type': 'application/json' });
      expect(Math.abs(Date.parse(event.headers.ce_time!) - Date.now())).toBeLessThan(120_000);
      expect(parseTraceparent(event.headers.traceparent)).toBeDefined();
      expectEventPayload(type, event.value);
    }
    // Once each: no event of this run was published twice.
    const ids = record.events.filter((event) => ours.some(([own]) => own.key === event.key && own.topic === event.topic)).map((event) => event.headers.ce_id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  describe('tracing', () => {
    /** The span of a request, once exported (the batch span processor exports every 5 s). */
    async function spansFor(what: string, find: (spans: readonly ReceivedSpan[]) => ReceivedSpan | undefined): Promise<ReceivedSpan> {
      await otlp!.waitFor(what, (spans) => find(spans) !== undefined, 15_000);
      return find(otlp!.spans)!;
    }

    it('should follow one trace from POST /otp and POST /otp/verify of auth through its gRPC client spans into the cache service', async () => {
      for (const path of ['/otp', '/otp/verify']) {
        const request = await spansFor(`auth POST ${path}`, (spans) => serverSpans(spans, 'auth', 'POST', path)[0]);
        await otlp!.waitFor(`cache spans under POST ${path}`, (spans) => cacheCallsUnder(spans, request).length > 0, 15_000);
        for (const { client, server } of cacheCallsUnder(otlp!.spans, request)) {
          expect(client).toMatchObject({ service: 'auth', traceId: request.traceId });
          expect(server).toMatchObject({ service: 'cache', traceId: request.traceId, parentSpanId: client.spanId, name: client.name });
        }
      }
    }, 40_000);

    it('should carry the trace of the request that caused each event in its traceparent, down to the producer span', async () => {
      const login = stepRecord(record, 'login');
      const announcement = stepRecord(record, 'announcement');
      const causes: Array<[TailedEvent, string, string, string]> = [
        [login.smsEvent, 'auth', 'POST', '/otp'],
        [login.loggedInEvent, 'auth', 'POST', '/otp/verify'],
        [stepRecord(record, 'payment').paymentConfirmedEvent, 'webhooks', 'POST', PAYMENT_WEBHOOK_PATH],
        ...announcement.notifications.map((event): [TailedEvent, string, string, string] => [event, 'webhooks', 'POST', SMS_WEBHOOK_PATH]),
      ];
      for (const [event, service, method, path] of causes) {
        const traceId = parseTraceparent(event.headers.traceparent)!.traceId;
        const request = await spansFor(`${service} ${method} ${path} of ${event.headers.ce_type}`, (spans) =>
          serverSpans(spans, service, method, path).find((span) => span.traceId === traceId),
        );
        const producer = await spansFor(`the producer span of ${event.headers.ce_type}`, (spans) => producerSpanOf(spans, event.headers.traceparent));
        expect(producer).toMatchObject({ service, traceId: request.traceId, name: `send ${event.topic}` });
      }
    }, 40_000);
  });

  it('should stop every service on SIGTERM with exit code 0', async () => {
    const exits: Record<string, ServiceExit> = await platform!.stop();
    expect(exits).toEqual({
      cache: { code: 0, signal: null },
      'graph-registry': { code: 0, signal: null },
      auth: { code: 0, signal: null },
      webhooks: { code: 0, signal: null },
    });
  });
});
