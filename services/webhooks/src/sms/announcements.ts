import { unavailable } from '@sp/core';
import type { Logger } from '@sp/observability';
import { sendSmsNotificationEvent, type EventPublisher } from '@sp/messaging';
import type { AnnouncementDrafts, Draft } from './announcement-drafts.js';
import type { Topics } from '../topics.js';
import type { GatewayPort, Subscriber } from '../gateway/gateway-port.js';
import type { Localization } from './localization.js';
import { smsReplies } from './sms-replies.js';
import type { WebhooksMetrics } from '../webhooks-metrics.js';

export interface AnnouncementDeps {
  gateway: GatewayPort;
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

/** The SMS a command came in (its MessageSid identifies drafts and announcements). */
export interface IncomingMessage {
  from: string;
  messageSid: string;
}

/** Any other text from a client: store it as the draft (replacing an earlier one; its id is the message's) and ask for CONFIRM. */
export async function draftAnnouncement({ from, messageSid }: IncomingMessage, text: string, deps: AnnouncementDeps): Promise<string> {
  const client = await deps.gateway.clientByPhoneNumber(from);
  if (client === null) return smsReplies.notAClient();
  await deps.drafts.save(from, { id: messageSid, text }, deps.draftTtlMs);
  return smsReplies.draftSaved(deps.draftTtlMs);
}

async function allSubscribers(gateway: GatewayPort, clientId: string): Promise<Subscriber[]> {
  const subscribers: Subscriber[] = [];
  let after: string | undefined;
  do {
    const page = await gateway.subscribers(clientId, PAGE_SIZE, after);
    subscribers.push(...page.items);
    after = page.nextCursor ?? undefined;
  } while (after !== undefined);
  return subscribers;
}

/**
 * Localization calls in flight at once, and the most distinct locales translated per announcement
 * (the most common ones; subscribers of the others get the original text): the locales come from
 * subscriber records, so their count is not bounded by anything the service controls, and one
 * CONFIRM must not open thousands of calls at once or run for minutes.
 */
const LOCALIZE_CONCURRENCY = 8;
export const MAX_LOCALES = 50;

/** Distinct locales of the subscribers, the most common first, at most MAX_LOCALES. */
function localesOf(subscribers: readonly Subscriber[]): string[] {
  const counts = new Map<string, number>();
  for (const { locale } of subscribers) if (locale !== null && locale !== '') counts.set(locale, (counts.get(locale) ?? 0) + 1);
  return [...counts.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, MAX_LOCALES)
    .map(([locale]) => locale);
}

/** The text in each translated locale (one call per locale, a few at a time); where localization fails, the original text. */
async function localize(text: string, subscribers: readonly Subscriber[], deps: AnnouncementDeps): Promise<Map<string, string>> {
  const translate = async (locale: string): Promise<[string, string]> => {
    try {
      return [locale, await deps.localization.translate(text, locale)];
    } catch (err) {
      deps.logger.warn({ err, locale }, 'localization failed; sending the original text');
      return [locale, text];
    }
  };
  const locales = localesOf(subscribers);
  const texts = new Map<string, string>();
  for (let start = 0; start < locales.length; start += LOCALIZE_CONCURRENCY) {
    for (const [locale, localized] of await Promise.all(locales.slice(start, start + LOCALIZE_CONCURRENCY).map(translate))) texts.set(locale, localized);
  }
  return texts;
}

interface Announcement {
  draft: Draft;
  /** The draft in each subscriber locale. */
  texts: Map<string, string>;
}

/**
 * Publishes one SendSmsNotificationEvent per subscriber; resolves with how many reached the broker.
 * Each event's CloudEvents id is the draft's id with the phone number: a publish that timed out may
 * still land, and a later CONFIRM of the same draft (after a failure) then repeats the same ids, so
 * the consumer drops the duplicate.
 */
async function publishAll(subscribers: readonly Subscriber[], { draft, texts }: Announcement, deps: AnnouncementDeps): Promise<number> {
  let reached = 0;
  for (let start = 0; start < subscribers.length; start += PUBLISH_BATCH) {
    const batch = subscribers.slice(start, start + PUBLISH_BATCH);
    const outcomes = await Promise.allSettled(
      batch.map((subscriber) => {
        const text = (subscriber.locale !== null && texts.get(subscriber.locale)) || draft.text;
        const event = sendSmsNotificationEvent({ phoneNumber: subscriber.phoneNumber, resourceKey: 'Announcement', text, locale: subscriber.locale }, `${draft.id}:${subscriber.phoneNumber}`);
        return deps.publisher.publish(deps.topics.notifications, event);
      }),
    );
    reached += outcomes.filter((outcome) => outcome.status === 'fulfilled').length;
  }
  return reached;
}

/**
 * Marks the draft sent by this CONFIRM (false: another CONFIRM did). The cache service answering
 * UNAVAILABLE may still have stored the mark: it is undone then, so the draft is not left marked
 * but unsent.
 */
async function claimDraft({ from, messageSid }: IncomingMessage, draft: Draft, deps: AnnouncementDeps): Promise<boolean> {
  try {
    return await deps.drafts.claim(from, draft.id, messageSid, deps.draftTtlMs);
  } catch (err) {
    await deps.drafts.unclaim(from, draft.id, messageSid).catch(() => undefined);
    throw err;
  }
}

/**
 * CONFIRM from a client: the draft goes to every subscriber of the client, localized to each
 * subscriber's locale.
 *
 * The draft sent is the one pending when the CONFIRM arrived: it is read first, alongside the
 * client lookup, so a draft texted while the CONFIRM runs is neither sent unconfirmed nor lost
 * (it stays pending under its own id). Everything that can fail before sending (client, draft,
 * subscribers) is read before the draft is marked sent; only the request whose mark was stored
 * sends, so a double CONFIRM sends once. When no event at all reaches the broker the mark is
 * undone and the request fails (the client can CONFIRM again).
 */
export async function confirmAnnouncement(confirm: IncomingMessage, deps: AnnouncementDeps): Promise<string> {
  const [client, draft] = await Promise.all([deps.gateway.clientByPhoneNumber(confirm.from), deps.drafts.pending(confirm.from)]);
  if (client === null) return smsReplies.notAClient();
  if (draft === undefined) return smsReplies.nothingPending();
  const subscribers = await allSubscribers(deps.gateway, client.id);
  const texts = await localize(draft.text, subscribers, deps);
  if (!(await claimDraft(confirm, draft, deps))) return smsReplies.nothingPending();
  const reached = await publishAll(subscribers, { draft, texts }, deps);
  if (reached === 0 && subscribers.length > 0) {
    await deps.drafts.unclaim(confirm.from, draft.id, confirm.messageSid).catch(() => undefined);
    throw unavailable('message broker');
  }
  deps.metrics.announcementSent(reached);
  deps.logger.info({ clientId: client.id, reached, subscribers: subscribers.length, draftId: draft.id }, 'announcement sent');
  return reached === subscribers.length ? smsReplies.sent(reached) : smsReplies.partlySent(reached, subscribers.length);
}
