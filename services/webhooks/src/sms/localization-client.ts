import type { Localization } from './localization.js';

export interface LocalizationClientOptions {
  /** LOCALIZATION_API_URL, without a trailing slash. */
  baseUrl: string;
  /** Upper bound for one translation. Default 2000 ms. */
  timeoutMs?: number;
}

interface TranslateResponse {
  text?: unknown;
}

/** `POST {LOCALIZATION_API_URL}/translate` with `{"text", "targetLocale"}` → `200 {"text", "locale"}`. */
export function createLocalizationClient(options: LocalizationClientOptions): Localization {
  const url = `${options.baseUrl}/translate`;
  return {
    async translate(text, locale) {
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json' },
        body: JSON.stringify({ text, targetLocale: locale }),
        signal: AbortSignal.timeout(options.timeoutMs ?? 2000),
      });
      if (!response.ok) {
        await response.body?.cancel();
        throw new Error(`localization service answered ${response.status}`);
      }
      const body = (await response.json()) as TranslateResponse;
      if (typeof body.text !== 'string') throw new Error('localization service answered without text');
      return body.text;
    },
  };
}
