/** The locales the service hands on (to Keycloak, to the SMS) and the one used when none fits. */
export interface LocaleSettings {
  supported: readonly string[];
  fallback: string;
}

/** `de-AT` → `de` when only `de` is supported; exact matches win. */
function match(tag: string, supported: readonly string[]): string | undefined {
  const lower = tag.trim().toLowerCase();
  const exact = supported.find((locale) => locale.toLowerCase() === lower);
  if (exact !== undefined) return exact;
  const language = lower.split('-')[0];
  return supported.find((locale) => locale.toLowerCase() === language);
}

/** Accept-Language tags by descending quality (`*` and malformed entries dropped). */
function acceptedTags(header: string): string[] {
  return header
    .split(',')
    .slice(0, 20)
    .map((part, index) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = params.map((p) => /^\s*q=([01](?:\.\d{1,3})?)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
      return { tag: tag.trim(), quality: q === undefined ? 1 : Number(q), index };
    })
    .filter((entry) => entry.tag !== '' && entry.tag !== '*' && entry.quality > 0)
    .sort((a, b) => b.quality - a.quality || a.index - b.index)
    .map((entry) => entry.tag);
}

/**
 * The user's locale: an explicit `locale` (request body) when supported, else the best supported
 * language of Accept-Language, else the fallback.
 */
export function resolveLocale(explicit: unknown, acceptLanguage: string | undefined, settings: LocaleSettings): string {
  if (typeof explicit === 'string') {
    const chosen = match(explicit, settings.supported);
    if (chosen !== undefined) return chosen;
  }
  for (const tag of acceptedTags(acceptLanguage ?? '')) {
    const chosen = match(tag, settings.supported);
    if (chosen !== undefined) return chosen;
  }
  return settings.fallback;
}
