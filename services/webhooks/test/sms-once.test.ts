import { beforeEach, describe, expect, it } from '@jest/globals';
import type { GatewayClient } from '../../../test/support/graphql-gateway.js';
import { createCacheAnnouncementDrafts } from '../src/sms/announcement-drafts.js';
import { useTwoReplicas } from './support/replicas-suite.js';
import { freshPhone, notificationsOf, sendSms, settleNotifications } from './support/sms-suite.js';
import { counterValue, postSms, replyText, sleep, smsForm, type Dependencies, type WebhooksInstance } from './support/webhooks-env.js';

let deps: Dependencies;
/** Two replicas sharing the store and the cache service: a replay may reach either. */
let replicas: [WebhooksInstance, WebhooksInstance];
useTwoReplicas((suite) => ({ deps, replicas } = suite));

const EMPTY = '<?xml version="1.0" encoding="UTF-8"?><Response/>';
const SENT_TO_3 = 'Your announcement was sent to 3 subscribers.';
const SAVED = 'Announcement saved. Text CONFIRM to send it to your subscribers. It expires in 24 hours; a new text replaces it.';
const NOTHING = 'You have no announcement waiting. Text your announcement first, then CONFIRM.';

let owner: string;
let client: GatewayClient;
beforeEach(() => {
  deps.gateway.reset();
  owner = freshPhone();
  client = deps.gateway.addClient({ number: 4, name: 'Bakery', phoneNumber: owner });
  for (const phone of ['+34600000011', '+34600000012', '+34600000013']) deps.gateway.addSubscriber(client.id, phone, null);
});

const settle = (): Promise<void> => settleNotifications(deps, replicas[0]);
const pendingText = async (phone: string): Promise<string | undefined> => (await createCacheAnnouncementDrafts(deps.cacheClient).pending(phone))?.text;

/**
 * Twilio's signatures never expire: a captured request verifies forever. Each message is
 * processed once by its MessageSid; a replay (same form, same signature) does nothing.
 */
describe('replayed SMS requests', () => {
  it('should not send an announcement again when a signed draft + CONFIRM pair is replayed', async () => {
    const text = `Replay pair ${owner}`;
    const draft = smsForm(owner, text);
    const confirm = smsForm(owner, 'CONFIRM');
    expect(replyText(await postSms(replicas[0].baseUrl, draft))).toBe(SAVED);
    expect(replyText(await postSms(replicas[0].baseUrl, confirm))).toBe(SENT_TO_3);
    const duplicates = await counterValue(replicas[1].registry, 'webhook_events_total', { provider: 'twilio', result: 'duplicate' });

    const replayedDraft = await postSms(replicas[1].baseUrl, draft);
    const replayedConfirm = await postSms(replicas[1].baseUrl, confirm);
    expect([replayedDraft.status, replayedDraft.text, replayedConfirm.status, replayedConfirm.text]).toEqual([200, EMPTY, 200, EMPTY]);
    expect(await counterValue(replicas[1].registry, 'webhook_events_total', { provider: 'twilio', result: 'duplicate' })).toBe(duplicates + 2);
    expect(await pendingText(owner)).toBeUndefined();
    await settle();
    expect(notificationsOf(deps, text)).toHaveLength(3);
  });

  it("should not send the client's new, unconfirmed draft when an old CONFIRM is replayed", async () => {
    const confirm = smsForm(owner, 'CONFIRM');
    await sendSms(replicas[0], owner, `First ${owner}`);
    expect(replyText(await postSms(replicas[0].baseUrl, confirm))).toBe(SENT_TO_3);
    const unconfirmed = `Not yet ${owner}`;
    expect(replyText(await sendSms(replicas[0], owner, unconfirmed))).toBe(SAVED);

    expect((await postSms(replicas[1].baseUrl, confirm)).text).toBe(EMPTY);
    expect(await pendingText(owner)).toBe(unconfirmed);
    await settle();
    expect(notificationsOf(deps, unconfirmed)).toEqual([]);
    // The client's own CONFIRM sends it, once.
    expect(replyText(await sendSms(replicas[1], owner, 'CONFIRM'))).toBe(SENT_TO_3);
    await settle();
    expect(notificationsOf(deps, unconfirmed)).toHaveLength(3);
  });

  it('should process a message delivered to two replicas at once only once', async () => {
    const text = `Twice at once ${owner}`;
    await sendSms(replicas[0], owner, text);
    const confirm = smsForm(owner, 'CONFIRM');
    const answers = await Promise.all(replicas.map((replica) => postSms(replica.baseUrl, confirm)));
    expect(answers.map((answer) => replyText(answer) ?? answer.text).sort()).toEqual([EMPTY, SENT_TO_3].sort());
    await settle();
    expect(notificationsOf(deps, text)).toHaveLength(3);
  });

  it('should refuse a message without a Twilio MessageSid with 400, doing nothing', async () => {
    for (const messageSid of [undefined, '', 'SM123', `SM${'0'.repeat(31)}}`]) {
      const form = smsForm(owner, 'A draft without id');
      if (messageSid === undefined) delete form.MessageSid;
      else form.MessageSid = messageSid;
      const answer = await postSms(replicas[0].baseUrl, form);
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({ error: 'MessageSid must be a Twilio message SID (SM or MM and 32 hex digits)' });
    }
    expect(deps.gateway.received).toEqual([]);
    expect(await pendingText(owner)).toBeUndefined();
  });
});

/**
 * A CONFIRM acts on the draft that was pending when it arrived: a draft texted while it runs is
 * neither sent unconfirmed nor lost.
 */
describe('a draft texted while a CONFIRM runs', () => {
  it('should keep a draft texted 0.8 s into a CONFIRM (subscriber lookup taking 2.5 s) pending, and send it on the next CONFIRM', async () => {
    const first = `First ${owner}`;
    const second = `Second ${owner}`;
    await sendSms(replicas[0], owner, first);
    deps.gateway.delayNext({ field: 'subscribers', ms: 2500 });
    const confirming = sendSms(replicas[0], owner, 'CONFIRM');
    await sleep(800);
    expect(replyText(await sendSms(replicas[1], owner, second))).toBe(SAVED);
    expect(replyText(await confirming)).toBe(SENT_TO_3);

    expect(await pendingText(owner)).toBe(second);
    expect(replyText(await sendSms(replicas[1], owner, 'CONFIRM'))).toBe(SENT_TO_3);
    expect(replyText(await sendSms(replicas[0], owner, 'CONFIRM'))).toBe(NOTHING);
    await settle();
    expect(notificationsOf(deps, first)).toHaveLength(3);
    expect(notificationsOf(deps, second)).toHaveLength(3);
  });

  it('should send the draft pending when the CONFIRM arrived, not one texted while its client lookup was slow', async () => {
    const confirmed = `Confirmed ${owner}`;
    const later = `Later ${owner}`;
    await sendSms(replicas[0], owner, confirmed);
    deps.gateway.delayNext({ field: 'clientByPhoneNumber', ms: 2000 });
    const confirming = sendSms(replicas[0], owner, 'CONFIRM');
    await sleep(500);
    expect(replyText(await sendSms(replicas[1], owner, later))).toBe(SAVED);
    expect(replyText(await confirming)).toBe(SENT_TO_3);
    await settle();
    expect(notificationsOf(deps, confirmed)).toHaveLength(3);
    expect(notificationsOf(deps, later)).toEqual([]);
    expect(await pendingText(owner)).toBe(later);
  });
});
