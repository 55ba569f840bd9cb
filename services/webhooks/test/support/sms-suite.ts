import type { ConsumedEvent } from '../../../../test/support/kafka.js';
import { postSms, smsForm, type Answer, type Dependencies, type WebhooksInstance } from './webhooks-env.js';

let phoneCounter = 0;
/** A phone number of this test alone, so drafts in the (shared) cache service never collide. */
export const freshPhone = (): string => `+1555${String(Date.now() % 1_000_000).padStart(6, '0')}${String(++phoneCounter).padStart(2, '0')}`.slice(0, 13);

/** Sends, signed, an SMS with a new MessageSid. */
export const sendSms = (service: WebhooksInstance, from: string, body: string): Promise<Answer> => postSms(service.baseUrl, smsForm(from, body));

/** Announcement notifications published so far whose text ends with `text` (texts are localized by prefixing). */
export const notificationsOf = (deps: Dependencies, text: string): ConsumedEvent[] =>
  deps.events.events.filter((e) => e.topic === deps.topics.notifications && String(e.value.text).endsWith(text));

/** Once a later announcement's event arrived, every earlier event that was going to arrive has (one partition, in order). */
export async function settleNotifications(deps: Dependencies, service: WebhooksInstance): Promise<void> {
  const markerPhone = freshPhone();
  const marker = deps.gateway.addClient({ number: 99, name: 'Marker', phoneNumber: markerPhone });
  deps.gateway.addSubscriber(marker.id, '+15550009999', null);
  const text = `marker ${markerPhone}`;
  await sendSms(service, markerPhone, text);
  await sendSms(service, markerPhone, 'CONFIRM');
  await deps.events.waitFor((e) => e.value.text === text);
}
