import twilio from 'twilio';
import type { SmsProvider } from './sms-provider.js';

/** Twilio: request validation with the official library (any of the tokens, for rotation) and TwiML replies. */
export function createTwilioSmsProvider(authTokens: readonly string[]): SmsProvider {
  return {
    verifySignature(url, params, signature) {
      if (signature === undefined || signature === '') return false;
      return authTokens.some((token) => twilio.validateRequest(token, signature, url, params));
    },
    reply(text) {
      const response = new twilio.twiml.MessagingResponse();
      if (text !== undefined) response.message(text);
      return { contentType: 'text/xml', body: response.toString() };
    },
  };
}
