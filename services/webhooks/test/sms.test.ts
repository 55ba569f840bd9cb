import { afterAll, beforeAll, beforeEach, describe, expect, it } from '@jest/globals';
import twilio from 'twilio';
import { expectEventPayload } from '../../../test/support/asyncapi-contract.js';
import type { GatewayClient } from '../../../test/support/graphql-gateway.js';
import type { ConsumedEvent } from '../../../test/support/kafka.js';
import { fixtureTranslation } from '../../../test/support/localization-service.js';
import {
  API_KEY,
  counterValue,
  PUBLIC_BASE_URL,
  LINKS,
  postSms,
  replyText,
  smsForm,
  startDependencies,
  startWebhooks,
  TWILIO_TOKENS,
  type Dependencies,
  type WebhooksInstance,
} from './support/webhooks-env.js';
import { createCacheAnnouncementDrafts } from '../src/sms/announcement-drafts.js';
import { freshPhone, notificationsOf, sendSms, settleNotifications } from './support/sms-suite.js';
import { codePoints, INVISIBLE_BODIES } from './support/invisible-bodies.js';
import { PROVIDER_KEYWORDS } from '../src/sms/sms-commands.js';

const SMS_PATH = '/api/SmsProviderWebhookHandler';

let deps: Dependencies;
let service: WebhooksInstance;

beforeAll(async () => {
  deps = await startDependencies();
  service = await startWebhooks(deps);
});

afterAll(async () => {
  await service?.close();
  await deps?.close();
});


let owner: string;
let client: GatewayClient;
const SUBSCRIBERS = [
  { phoneNumber: '+34600000001', locale: 'es' },
  { phoneNumber: '+33600000002', locale: 'fr' },
  { phoneNumber: '+4915100000003', locale: 'de' },
  { phoneNumber: '+15550000004', locale: null },
] as const;

beforeEach(() => {
  deps.gateway.reset();
  deps.localization.reset();
  owner = freshPhone();
  client = deps.gateway.addClient({ number: 3, name: 'Corner Shop', phoneNumber: owner, providerCustomerId: 'cus_corner' });
  for (const subscriber of SUBSCRIBERS) deps.gateway.addSubscriber(client.id, subscriber.phoneNumber, subscriber.locale);
});

const send = (from: string, body: string) => sendSms(service, from, body);
const notifications = (text: string): ConsumedEvent[] => notificationsOf(deps, text);
const settle = (): Promise<void> => settleNotifications(deps, service);
/** The text of the sender's draft still to be sent, read as the service reads it. */
const pendingText = async (phone: string): Promise<string | undefined> => (await createCacheAnnouncementDrafts(deps.cacheClient).pending(phone))?.text;

describe('commands', () => {
  it.each(['COMMANDS', 'commands', '  Commands  '])('should reply to %j with the commands and the links', async (body) => {
    const answer = await send(freshPhone(), body);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toMatch(/^text\/xml/);
    const text = replyText(answer)!;
    for (const command of ['COMMANDS', 'UNSUB <number>', 'CONFIRM']) expect(text).toContain(command);
    expect(text).toContain(`Account: ${LINKS.account}`);
    expect(text).toContain(`Billing: ${LINKS.billingPortal}`);
    expect(text).toContain(`Clients: ${LINKS.clientBase}`);
    expect(deps.gateway.received).toEqual([]);
  });

  it('should unsubscribe the sender from client 3 on UNSUB 3', async () => {
    const subscriber = SUBSCRIBERS[1].phoneNumber;
    const answer = await send(subscriber, 'UNSUB 3');
    expect(replyText(answer)).toBe(`You are unsubscribed from Corner Shop (3). To subscribe again: ${LINKS.clientBase}/3`);
    // subscribedBefore: the time the command arrived (the late-write guard, late-gateway-write.test.ts).
    expect(deps.gateway.mutations('unsubscribe').map((op) => op.variables)).toEqual([{ clientId: client.id, phoneNumber: subscriber, subscribedBefore: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
    expect(deps.gateway.data.subscriptions.map((s) => s.phoneNumber)).not.toContain(subscriber);
    expect(deps.gateway.data.subscriptions).toHaveLength(SUBSCRIBERS.length - 1);
  });

  it('should tell a sender who is not subscribed, and one naming an unknown client', async () => {
    expect(replyText(await send('+15551112222', 'unsub 3'))).toBe('You are not subscribed to Corner Shop (3).');
    expect(replyText(await send('+15551112222', 'UNSUB 42'))).toBe('There is no client number 42. Text COMMANDS for help.');
    expect(deps.gateway.data.subscriptions).toHaveLength(SUBSCRIBERS.length);
  });

  it.each(['UNSUB 0000000003', 'unsub 003', 'ＵＮＳＵＢ ３'])('should read %j as UNSUB 3 (leading zeros, full-width forms), not as a draft', async (body) => {
    const subscriber = SUBSCRIBERS[0].phoneNumber;
    expect(replyText(await send(subscriber, body))).toBe(`You are unsubscribed from Corner Shop (3). To subscribe again: ${LINKS.clientBase}/3`);
    // subscribedBefore: the time the command arrived (the late-write guard, late-gateway-write.test.ts).
    expect(deps.gateway.mutations('unsubscribe').map((op) => op.variables)).toEqual([{ clientId: client.id, phoneNumber: subscriber, subscribedBefore: expect.stringMatching(/^\d{4}-\d\d-\d\dT/) }]);
  });

  it.each(['UNSUB 2147483648', 'UNSUB 99999999999999999999'])('should answer %j, beyond any client number, clearly and without asking the gateway', async (body) => {
    expect(replyText(await send(SUBSCRIBERS[0].phoneNumber, body))).toBe('There is no client with that number: client numbers go up to 2147483647. Text COMMANDS for help.');
    expect(deps.gateway.received).toEqual([]);
    expect(deps.gateway.data.subscriptions).toHaveLength(SUBSCRIBERS.length);
  });

  it.each(Object.entries(PROVIDER_KEYWORDS).flatMap(([keyword, words]) => words.map((word) => [word, keyword])))(
    'should acknowledge Twilio\'s keyword %s (%s) in every case and with spaces around with an empty response, storing and sending nothing',
    async (word, keyword) => {
      const before = await counterValue(service.registry, 'sms_commands_total', { command: keyword });
      const forms = [word, word.toLowerCase(), `${word[0]}${word.slice(1).toLowerCase()}`, `  ${word}\n`];
      for (const form of forms) {
        const answer = await send(owner, form);
        expect(answer.status).toBe(200);
        expect(answer.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
      }
      expect(deps.gateway.received).toEqual([]);
      expect(await pendingText(owner)).toBeUndefined();
      expect(await counterValue(service.registry, 'sms_commands_total', { command: keyword })).toBe(before + forms.length);
      // Nothing was drafted, so a CONFIRM sends nothing.
      expect(replyText(await send(owner, 'CONFIRM'))).toBe('You have no announcement waiting. Text your announcement first, then CONFIRM.');
    },
  );

  it('should take a keyword followed by more text as a draft, as Twilio does not act on it ("STOP the music")', async () => {
    expect(replyText(await send(owner, 'STOP the music'))).toBe('Announcement saved. Text CONFIRM to send it to your subscribers. It expires in 24 hours; a new text replaces it.');
    expect(await pendingText(owner)).toBe('STOP the music');
  });

  it('should acknowledge any message Twilio reports as a keyword (OptOutType, e.g. a Spanish one of Advanced Opt-Out)', async () => {
    const answer = await postSms(service.baseUrl, smsForm(owner, 'ALTO', { OptOutType: 'STOP' }));
    expect(answer.text).toBe('<?xml version="1.0" encoding="UTF-8"?><Response/>');
    expect(await pendingText(owner)).toBeUndefined();
  });

  it.each(INVISIBLE_BODIES.map((body) => [codePoints(body), body]))('should store no draft for %s, which shows nothing, and answer with the commands', async (_name, body) => {
    const answer = await send(owner, body);
    expect(replyText(answer)).toContain('COMMANDS - this list');
    expect(await pendingText(owner)).toBeUndefined();
    expect(deps.gateway.received).toEqual([]);
  });
});

describe('announcements', () => {
  it('should store a client text as the draft and ask for CONFIRM, a new text replacing the old', async () => {
    const first = await send(owner, 'Fresh bread at 8!');
    expect(replyText(first)).toBe('Announcement saved. Text CONFIRM to send it to your subscribers. It expires in 24 hours; a new text replaces it.');
    expect(await pendingText(owner)).toBe('Fresh bread at 8!');
    await send(owner, 'Fresh bread at 9!');
    expect(await pendingText(owner)).toBe('Fresh bread at 9!');
    expect(deps.gateway.mutations()).toEqual([]);
  });

  it('should send one localized notification per subscriber on CONFIRM, mark the draft sent and state the count', async () => {
    const text = `Half price today ${owner}`;
    await send(owner, text);
    const before = await counterValue(service.registry, 'announcements_sent_total');
    const answer = await send(owner, 'CONFIRM');
    expect(replyText(answer)).toBe('Your announcement was sent to 4 subscribers.');
    expect(await pendingText(owner)).toBeUndefined();

    for (const subscriber of SUBSCRIBERS) {
      const event = await deps.events.waitFor((e) => e.topic === deps.topics.notifications && e.key === subscriber.phoneNumber && String(e.value.text).endsWith(text));
      expect(event.value).toEqual({
        phoneNumber: subscriber.phoneNumber,
        resourceKey: 'Announcement',
        text: subscriber.locale === null ? text : fixtureTranslation(text, subscriber.locale),
        locale: subscriber.locale,
      });
      expectEventPayload('SendSmsNotificationEvent', event.value);
      expect(event.headers).toMatchObject({ ce_type: 'SendSmsNotificationEvent', ce_source: '/subscription-platform/webhooks' });
    }
    // One translation per locale; none for the subscriber without one.
    expect(deps.localization.requests.map((r) => r.targetLocale).sort()).toEqual(['de', 'es', 'fr']);
    expect(await counterValue(service.registry, 'announcements_sent_total')).toBe(before + 1);
    await settle();
    expect(notifications(text)).toHaveLength(4);
  });

  it('should send the original text where localization fails or is too slow', async () => {
    const text = `Closed on Monday ${owner}`;
    await send(owner, text);
    deps.localization.failWith('http-500', ['fr']);
    // German answers never come: the client's timeout (500 ms in tests) gives up and keeps the original.
    deps.localization.failWith('hang', ['de']);
    const answer = await send(owner, 'confirm');
    deps.localization.failWith(null);
    expect(replyText(answer)).toBe('Your announcement was sent to 4 subscribers.');
    await settle();
    const byPhone = Object.fromEntries(notifications(text).map((e): [string, string] => [e.key!, String(e.value.text)]));
    expect(byPhone).toEqual({
      '+34600000001': fixtureTranslation(text, 'es'),
      '+33600000002': text,
      '+4915100000003': text,
      '+15550000004': text,
    });
  });

  it('should translate at most 50 distinct locales, the most common, and send the others the original text', async () => {
    const text = `Many locales ${owner}`;
    // 60 rare locales (one subscriber each) besides the four subscribers of beforeEach (es, fr, de, none).
    const rare = Array.from({ length: 60 }, (_, i) => `x-rare${String(i).padStart(2, '0')}`);
    rare.forEach((locale, i) => deps.gateway.addSubscriber(client.id, `+4470000${String(i).padStart(5, '0')}`, locale));
    for (const phone of ['+34600000091', '+34600000092']) deps.gateway.addSubscriber(client.id, phone, 'es');
    await send(owner, text);
    expect(replyText(await send(owner, 'CONFIRM'))).toBe('Your announcement was sent to 66 subscribers.');
    const translated = deps.localization.requests.map((r) => r.targetLocale);
    expect(translated).toHaveLength(50);
    expect(translated).toContain('es');
    await settle();
    const sent = notifications(text);
    expect(sent).toHaveLength(66);
    // Untranslated: the 13 rarest locales (ties keep the subscribers' order) and the subscriber without one.
    expect(sent.filter((e) => e.value.text === text)).toHaveLength(rare.length - 47 + 1);
  });

  it('should reply that nothing is pending on CONFIRM without a draft, sending nothing', async () => {
    const answer = await send(owner, 'CONFIRM');
    expect(replyText(answer)).toBe('You have no announcement waiting. Text your announcement first, then CONFIRM.');
    expect(deps.gateway.received.map((op) => op.fields[0])).toEqual(['clientByPhoneNumber']);
  });

  it('should send only once when CONFIRM arrives twice at the same time', async () => {
    const text = `Only once ${owner}`;
    await send(owner, text);
    const replies = (await Promise.all([send(owner, 'CONFIRM'), send(owner, 'CONFIRM')])).map(replyText).sort();
    expect(replies).toEqual(['You have no announcement waiting. Text your announcement first, then CONFIRM.', 'Your announcement was sent to 4 subscribers.']);
    await settle();
    expect(notifications(text)).toHaveLength(4);
  });

  it('should take an announcement of exactly 1,600 characters (emoji count once) and send it whole', async () => {
    const text = `${owner} ${'🍞'.repeat(1600 - owner.length - 1)}`;
    expect([...text]).toHaveLength(1600);
    expect(replyText(await send(owner, text))).toBe('Announcement saved. Text CONFIRM to send it to your subscribers. It expires in 24 hours; a new text replaces it.');
    expect(replyText(await send(owner, 'CONFIRM'))).toBe('Your announcement was sent to 4 subscribers.');
    const event = await deps.events.waitFor((e) => e.topic === deps.topics.notifications && e.key === SUBSCRIBERS[3].phoneNumber && e.value.text === text);
    expect(event.value.text).toBe(text);
  });

  it.each([1601, 10_005])('should refuse a message of %i characters with a reply saying so, storing no draft and sending nothing', async (length) => {
    await send(owner, 'An earlier draft');
    const answer = await send(owner, 'x'.repeat(length));
    expect(answer.status).toBe(200);
    expect(replyText(answer)).toBe(`Your message has ${length} characters; at most 1600 are accepted. Nothing was saved: send a shorter text.`);
    expect(await pendingText(owner)).toBe('An earlier draft');
    // The refusal happens before the command: not even the sender is looked up.
    expect(deps.gateway.received.map((op) => op.fields[0])).toEqual(['clientByPhoneNumber']);
    expect(await counterValue(service.registry, 'webhook_events_total', { provider: 'twilio', result: 'refused' })).toBeGreaterThan(0);
  });

  it('should explain to a sender who is not a client that only clients can send announcements', async () => {
    const stranger = freshPhone();
    const draft = await send(stranger, 'Buy my stuff');
    expect(replyText(draft)).toBe('Only clients can send announcements. Text COMMANDS for help.');
    expect(await deps.cacheClient.get(`announcement:${stranger}`)).toBeUndefined();
    expect(replyText(await send(stranger, 'CONFIRM'))).toBe('Only clients can send announcements. Text COMMANDS for help.');
  });

  it('should ask the sender to try later when the gateway is down, keeping the draft', async () => {
    await send(owner, 'Keep me');
    await deps.gateway.down();
    try {
      const answer = await send(owner, 'CONFIRM');
      expect(answer.status).toBe(200);
      expect(replyText(answer)).toBe('Sorry, your message could not be processed right now. Please try again later.');
    } finally {
      await deps.gateway.up();
    }
    expect(await pendingText(owner)).toBe('Keep me');
  });
});

describe('provider authentication', () => {
  it('should reject a bad Twilio signature with 403 and process nothing', async () => {
    const before = await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'twilio' });
    const form = smsForm(owner, 'Not from Twilio');
    const wrongToken = await postSms(service.baseUrl, form, { token: 'not-the-auth-token' });
    expect(wrongToken.status).toBe(403);
    expect(wrongToken.json).toEqual({ error: 'invalid signature' });
    expect((await postSms(service.baseUrl, form, { signature: null })).status).toBe(403);
    // Signed by the right token, but over other parameters than those sent.
    const otherBody = await postSms(service.baseUrl, form, { signature: twilio.getExpectedTwilioSignature(TWILIO_TOKENS[0], `${PUBLIC_BASE_URL}${SMS_PATH}?code=${API_KEY}`, { ...form, Body: 'other' }) });
    // Signed over another URL (the internal address instead of the public one).
    const otherUrl = await postSms(service.baseUrl, form, { signature: twilio.getExpectedTwilioSignature(TWILIO_TOKENS[0], `${service.baseUrl}${SMS_PATH}?code=${API_KEY}`, form) });
    expect(otherUrl.status).toBe(403);
    expect(otherBody.status).toBe(403);
    expect(await counterValue(service.registry, 'webhook_signature_failures_total', { provider: 'twilio' })).toBe(before + 4);
    expect(deps.gateway.received).toEqual([]);
    expect(await deps.cacheClient.get(`announcement:${owner}`)).toBeUndefined();
  });

  describe.each([
    ['without', PUBLIC_BASE_URL],
    ['with', `${PUBLIC_BASE_URL}/`],
  ])('the signed URL, Webhooks__PublicBaseUrl %s a trailing slash', (_with, publicBaseUrl) => {
    let instance: WebhooksInstance;
    beforeAll(async () => {
      instance = await startWebhooks(deps, { env: { Webhooks__PublicBaseUrl: publicBaseUrl } });
    });
    afterAll(() => instance.close());

    // The URL configured in Twilio's console is the URL Twilio calls and signs, exactly.
    it.each([SMS_PATH, `${SMS_PATH}/`, '/API/smsProviderWebhookHandler'])('should accept a message Twilio signed for the URL it called, %s', async (path) => {
      const answer = await postSms(instance.baseUrl, smsForm(owner, 'COMMANDS'), { path });
      expect(answer.status).toBe(200);
      expect(replyText(answer)).toContain('COMMANDS - this list');
    });

    it('should refuse a signature for another path than the one called', async () => {
      const form = smsForm(owner, 'Signed for elsewhere');
      const canonical = `${PUBLIC_BASE_URL}${SMS_PATH}?code=${API_KEY}`;
      for (const path of [`${SMS_PATH}/`, SMS_PATH.toLowerCase()]) expect((await postSms(instance.baseUrl, form, { path, signedUrl: canonical })).status).toBe(403);
      const elsewhere = `${PUBLIC_BASE_URL}/other${SMS_PATH}?code=${API_KEY}`;
      expect((await postSms(instance.baseUrl, form, { signedUrl: elsewhere })).status).toBe(403);
      expect(await pendingText(owner)).toBeUndefined();
    });
  });

  it('should accept the second auth token (rotation) and refuse another account', async () => {
    expect((await postSms(service.baseUrl, smsForm(owner, 'COMMANDS'), { token: TWILIO_TOKENS[1] })).status).toBe(200);
    const otherAccount = await postSms(service.baseUrl, smsForm(owner, 'COMMANDS', { AccountSid: `AC${'f'.repeat(32)}` }));
    expect(otherAccount.status).toBe(403);
  });

  it('should reject a wrong code with 401', async () => {
    const answer = await postSms(service.baseUrl, smsForm(owner, 'COMMANDS'), { code: 'wrong' });
    expect(answer.status).toBe(401);
    expect(deps.gateway.received).toEqual([]);
  });

  it('should answer 413 for a form over 32 KiB, 415 for another media type and 400 without a sender', async () => {
    expect((await postSms(service.baseUrl, smsForm(owner, 'x'.repeat(33 * 1024)))).status).toBe(413);
    const json = await fetch(`${service.baseUrl}${SMS_PATH}?code=${API_KEY}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
    expect(json.status).toBe(415);
    // The media type is checked before the size: 2 MiB of text is 415, not 413.
    const bigText = await fetch(`${service.baseUrl}${SMS_PATH}?code=${API_KEY}`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: 'x'.repeat(2 * 1024 * 1024) });
    expect(bigText.status).toBe(415);
    const withoutSender: Record<string, string> = smsForm(owner, 'COMMANDS');
    delete withoutSender.From;
    const noSender = await postSms(service.baseUrl, withoutSender);
    expect(noSender.status).toBe(400);
    expect(noSender.json).toEqual({ error: 'From is required' });
    expect(deps.gateway.received).toEqual([]);
  });

  it('should accept unsigned messages only when signature validation is switched off', async () => {
    const unsigned = await startWebhooks(deps, { validateSignature: false });
    try {
      expect((await postSms(unsigned.baseUrl, smsForm(owner, 'COMMANDS'), { signature: null })).status).toBe(200);
    } finally {
      await unsigned.close();
    }
  });
});
