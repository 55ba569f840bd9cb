import { createHash } from 'node:crypto';
import type { CacheClient } from '@sp/cache-client';

/** A client's announcement draft. */
export interface Draft {
  /** MessageSid of the SMS that made it: one id per draft, so a newer draft is never taken for it. */
  id: string;
  text: string;
}

/**
 * Pending announcements, one per client phone number. Sending a draft marks it sent instead of
 * removing it: the mark is made atomically and only for that draft, so a newer draft saved while
 * a CONFIRM runs stays pending (see createCacheAnnouncementDrafts).
 */
export interface AnnouncementDrafts {
  /** The sender's draft that is still to be sent; undefined when there is none, it expired, or it was sent. */
  pending(phoneNumber: string): Promise<Draft | undefined>;
  /** Stores the draft, replacing any earlier one, for `ttlMs`. */
  save(phoneNumber: string, draft: Draft, ttlMs: number): Promise<void>;
  /** Marks draft `draftId` sent by `confirmId`, atomically: true only for the one caller that marked it (so it is sent once). */
  claim(phoneNumber: string, draftId: string, confirmId: string, ttlMs: number): Promise<boolean>;
  /** Undoes `claim` (nothing could be sent), if the mark is still `confirmId`'s. */
  unclaim(phoneNumber: string, draftId: string, confirmId: string): Promise<void>;
}

/** The cache record of a draft, exactly as the specification names it. */
export const draftKey = (phoneNumber: string): string => `announcement:${phoneNumber}`;
/** The mark of a sent draft, one key per draft. */
export const sentKey = (phoneNumber: string, draftId: string): string => `announcement:${phoneNumber}:sent:${draftId}`;

/**
 * A stored draft: JSON `{"id","text"}`. A plain text stored by an earlier version of the service
 * (within a draft's 24 h across an upgrade) is a draft whose id is the hash of its text.
 */
function parseDraft(value: string): Draft {
  try {
    const draft = JSON.parse(value) as Partial<Draft>;
    if (typeof draft.id === 'string' && typeof draft.text === 'string') return { id: draft.id, text: draft.text };
  } catch {
    // an earlier version's plain text
  }
  return { id: `text-${createHash('sha256').update(value).digest('base64url').slice(0, 22)}`, text: value };
}

/**
 * Drafts in the cache service (`announcement:{phone}`), through the typed cache client.
 *
 * The cache's Remove deletes whatever the key holds, so "read the draft, send it, remove it"
 * would remove a draft saved in between (unsent, although its sender was told it was saved).
 * Instead a sent draft gets a mark of its own,
 * `announcement:{phone}:sent:{draft id}`, set with SetIfAbsent (atomic in the cache service):
 * only the first CONFIRM of a draft marks it and sends, a newer draft has another id and stays
 * pending, and the sent draft's text expires with its TTL (the mark lives as long).
 */
export function createCacheAnnouncementDrafts(cache: CacheClient<string>): AnnouncementDrafts {
  return {
    async pending(phoneNumber) {
      const value = await cache.get(draftKey(phoneNumber));
      if (value === undefined) return undefined;
      const draft = parseDraft(value);
      return (await cache.get(sentKey(phoneNumber, draft.id))) === undefined ? draft : undefined;
    },
    save: (phoneNumber, draft, ttlMs) => cache.set(draftKey(phoneNumber), JSON.stringify(draft), ttlMs),
    async claim(phoneNumber, draftId, confirmId, ttlMs) {
      return (await cache.setIfAbsent(sentKey(phoneNumber, draftId), confirmId, ttlMs)).stored;
    },
    async unclaim(phoneNumber, draftId, confirmId) {
      // Only the mark this CONFIRM set goes: a later CONFIRM's mark (after this one expired) stays.
      await cache.removeIfEquals(sentKey(phoneNumber, draftId), confirmId);
    },
  };
}
