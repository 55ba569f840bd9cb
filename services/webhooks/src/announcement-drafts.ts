import type { CacheClient } from '@sp/cache-client';

/** Pending announcements, one per client phone number. */
export interface AnnouncementDrafts {
  get(phoneNumber: string): Promise<string | undefined>;
  /** Stores the draft, replacing any earlier one, for `ttlMs`. */
  save(phoneNumber: string, text: string, ttlMs: number): Promise<void>;
  /** Removes the draft; true only for the one caller that removed a live draft (so it is sent once). */
  take(phoneNumber: string): Promise<boolean>;
}

/** The cache record of a draft, exactly as the specification names it. */
export const draftKey = (phoneNumber: string): string => `announcement:${phoneNumber}`;

/** Drafts in the cache service (`announcement:{phone}`), through the typed cache client. */
export function createCacheAnnouncementDrafts(cache: CacheClient<string>): AnnouncementDrafts {
  return {
    get: (phoneNumber) => cache.get(draftKey(phoneNumber)),
    save: (phoneNumber, text, ttlMs) => cache.set(draftKey(phoneNumber), text, ttlMs),
    take: (phoneNumber) => cache.remove(draftKey(phoneNumber)),
  };
}
