import { randomUUID } from 'node:crypto';
import { sendSmsNotificationEvent, unavailable, type EventPublisher, type Logger } from '@sp/platform';
import type { AnnouncementDrafts } from './announcement-drafts.js';
import type { Topics } from './events.js';
import type { Gateway, Subscriber } from './gateway.js';
import type { Localization } from './localization.js';
import { smsReplies } from './sms-replies.js';
import type { WebhooksMetrics } from './webhooks-metrics.js';

export interface AnnouncementDeps {
  gateway: Gateway;
  drafts: AnnouncementDrafts;
  localization: Localization;
  publisher: EventPublisher;
  topics: Pick<Topics, 'notifications'>;
  metrics: WebhooksMetrics;
  logger: Logger;
  draftTtlMs: number;
}

/** Subscribers are read a page at a time. */
const PAGE_SIZE = 500;
/** Events published concurrently per batch. */
const PUBLISH_BATCH = 100;

/** Any other text from a client: store it as the draft (replacing an earlier one) and ask for CONFIRM. */
export async function draftAnnouncement(from: string, text: string, deps: AnnouncementDeps): Promise<string> {
  const client = await deps.gateway.clientByPhoneNumber(from);
  if (client === null) return smsReplies.notAClient();
  await deps.drafts.save(from, text, deps.draftTtlMs);
  return smsReplies.draftSaved(deps.draftTtlMs);
}

async function allSubscribers(gateway: Gateway, clientId: string): Promise<Subscriber[]> {
  const subscribers: Subscriber[] = [];
  let after: string | undefined;
  do {
    const page = await gateway.subscribers(clientId, PAGE_SIZE, after);
    subscribers.push(...page.items);
    after = page.nextCursor ?? undefined;
  } while (after !== undefined);
  return subscribers;
}

/** The text in each distinct locale (one call per locale); where localization fails, the original text. */
async function localize(text: string, subscribers: readonly Subscriber[], deps: AnnouncementDeps): Promise<Map<string, string>> {
  const locales = [...new Set(subscribers.map((s) => s.locale).filter((locale): locale is string => locale !== null && locale !== ''))];
  const entries = await Promise.all(
    locales.map(async (locale) => {
      try {
        return [locale, await deps.localization.translate(text, locale)] as const;
      } catch (err) {
        deps.logger.warn({ err, locale }, 'localization failed; sending the original text');
        return [locale, text] as const;
      }
    }),
  );
  return new Map(entries);
}

/** Publishes one SendSmsNotificationEvent per subscriber; resolves with how many reached the broker. */
interface Announcement {
  /** The draft as the client wrote it. */
  original: string;
  /** The draft in each subscriber locale. */
  texts: Map<string, string>;
  /** Id of the CONFIRM message; with each phone number, the events' CloudEvents id. */
  messageSid: string;
}

async function publishAll(subscribers: readonly Subscriber[], { original, texts, messageSid }: Announcement, deps: AnnouncementDeps): Promise<number> {
  let reached = 0;
  for (let start = 0; start < subscribers.length; start += PUBLISH_BATCH) {
    const batch = subscribers.slice(start, start + PUBLISH_BATCH);
    const outcomes = await Promise.allSettled(
      batch.map((subscriber) => {
        const text = (subscriber.locale !== null && texts.get(subscriber.locale)) || original;
        const event = sendSmsNotificationEvent({ phoneNumber: subscriber.phoneNumber, resourceKey: 'Announcement', text, locale: subscriber.locale }, `${messageSid}:${subscriber.phoneNumber}`);
        return deps.publisher.publish(deps.topics.notifications, event);
      }),
    );
    reached += outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
  }
  return reached;
}

/**
 * CONFIRM from a client: the draft goes to every subscriber of the client, localized to each
 * subscriber's locale. Everything that can fail before sending (client, draft, subscribers) is read
 * first; then the draft is removed, and only the request whose removal succeeded sends, so a
 * double CONFIRM sends once. When no event at all reaches the broker the draft is put back and the
 * request fails (the client can CONFIRM again).
 */
export async function confirmAnnouncement(from: string, messageSid: string | undefined, deps: AnnouncementDeps): Promise<string> {
  const client = await deps.gateway.clientByPhoneNumber(from);
  if (client === null) return smsReplies.notAClient();
  const draft = await deps.drafts.get(from);
  if (draft === undefined) return smsReplies.nothingPending();
  const subscribers = await allSubscribers(deps.gateway, client.id);
  const texts = await localize(draft, subscribers, deps);
  if (!(await deps.drafts.take(from))) return smsReplies.nothingPending();
  const reached = await publishAll(subscribers, { original: draft, texts, messageSid: messageSid ?? randomUUID() }, deps);
  if (reached === 0 && subscribers.length > 0) {
    await deps.drafts.save(from, draft, deps.draftTtlMs).catch(() => undefined);
    throw unavailable('message broker');
  }
  deps.metrics.announcementSent(reached);
  deps.logger.info({ clientId: client.id, reached, subscribers: subscribers.length }, 'announcement sent');
  return reached === subscribers.length ? smsReplies.sent(reached) : smsReplies.partlySent(reached, subscribers.length);
}
