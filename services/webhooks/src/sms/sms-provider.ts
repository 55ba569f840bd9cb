/**
 * The SMS provider (Twilio; adapter twilio-sms-provider.ts): signatures of its webhook calls and
 * the reply format it expects.
 */
export interface SmsProvider {
  /**
   * True when `signature` (X-Twilio-Signature) is the provider's signature of `url` (the full URL
   * it called, query string included) and the form `params`, with one of the auth tokens.
   */
  verifySignature(url: string, params: Readonly<Record<string, string>>, signature: string | undefined): boolean;
  /** The answer body: a reply SMS with `text`, or an empty answer (no reply) when undefined. */
  reply(text: string | undefined): { contentType: string; body: string };
}
