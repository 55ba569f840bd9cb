/** The localization service (contract: docs/localization-api.md; adapter localization-client.ts). */
export interface Localization {
  /** `text` in `locale`; rejects when the service fails or does not answer in time. */
  translate(text: string, locale: string): Promise<string>;
}
