import type Koa from 'koa';
import { badRequest, readBody, toAppError } from '@sp/platform';
import { confirmAnnouncement, draftAnnouncement, type AnnouncementDeps } from './announcements.js';
import { forbidden } from '@sp/platform';
import type { SmsProvider } from './sms-provider.js';
import { parseSmsCommand, type SmsCommand } from './sms-commands.js';
import { smsReplies, type ReplyLinks } from './sms-replies.js';
import { unsubscribe } from './unsubscribe.js';

/**
 * An SMS webhook is a form of a few hundred bytes, but a body of 1600 characters may be 1600
 * emoji: 4 UTF-8 bytes each, percent-encoded to 12, about 19 KiB. 32 KiB holds the longest
 * message the provider carries with all its other parameters.
 */
export const SMS_BODY_LIMIT_BYTES = 32 * 1024;
/**
 * The longest message the SMS provider carries (Twilio: 1600 characters, concatenated segments).
 * Counted in characters (code points), not UTF-16 units, so an emoji counts once.
 */
export const SMS_MAX_CHARACTERS = 1600;
export const SMS_WEBHOOK_PATH = '/api/SmsProviderWebhookHandler';

export interface SmsWebhookDeps extends AnnouncementDeps {
  smsProvider: SmsProvider;
  /** SMS_PROVIDER_ACCOUNT_SID: messages for any other account are refused. */
  accountSid: string;
  validateSignature: boolean;
  /** Webhooks__PublicBaseUrl: the signed URL is `{publicBaseUrl}/api/SmsProviderWebhookHandler?{query}`. */
  publicBaseUrl: string;
  links: ReplyLinks;
}

interface IncomingSms {
  from: string;
  body: string;
  messageSid: string | undefined;
}

function checkSignature(ctx: Koa.Context, params: Record<string, string>, deps: SmsWebhookDeps): void {
  if (!deps.validateSignature) return;
  const url = `${deps.publicBaseUrl}${SMS_WEBHOOK_PATH}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`;
  const signature = ctx.get('x-twilio-signature');
  if (deps.smsProvider.verifySignature(url, params, signature === '' ? undefined : signature)) return;
  deps.metrics.signatureFailure('twilio');
  throw forbidden('invalid signature');
}

function incomingSms(params: Record<string, string>, deps: SmsWebhookDeps): IncomingSms {
  if (params.AccountSid !== deps.accountSid) throw forbidden('message for another account');
  const from = params.From?.trim();
  if (from === undefined || from === '') throw badRequest('From is required');
  return { from, body: params.Body ?? '', messageSid: params.MessageSid };
}

function run(command: SmsCommand, sms: IncomingSms, deps: SmsWebhookDeps): Promise<string | undefined> {
  switch (command.kind) {
    case 'opt-in-keyword':
      return Promise.resolve(undefined);
    case 'commands':
      return Promise.resolve(smsReplies.commands(deps.links));
    case 'unsub':
      return unsubscribe(sms.from, command.clientNumber, deps);
    case 'confirm':
      return confirmAnnouncement(sms.from, sms.messageSid, deps);
    case 'draft':
      return draftAnnouncement(sms.from, command.text, deps);
  }
}

/**
 * POST /api/SmsProviderWebhookHandler (after the `code` check). Order: media type (415), size
 * (413), signature (403), account (403), sender (400), message length (a reply saying it is too
 * long), then the command. The answer is TwiML: a
 * reply SMS, or an empty `<Response/>` for the opt-in keywords. When a dependency fails the sender
 * is asked to try again later (200 with that reply: the provider would not redeliver anyway).
 */
export function smsProviderWebhook(deps: SmsWebhookDeps): Koa.Middleware {
  return async (ctx) => {
    const rawBody = await readBody(ctx, { limitBytes: SMS_BODY_LIMIT_BYTES, types: ['application/x-www-form-urlencoded'] });
    const params = Object.fromEntries(new URLSearchParams(rawBody.toString('utf8')));
    checkSignature(ctx, params, deps);
    const sms = incomingSms(params, deps);
    const characters = [...sms.body].length;
    if (characters > SMS_MAX_CHARACTERS) {
      // Refused before any command runs: no draft is stored and nothing is published.
      deps.metrics.event('twilio', 'sms', 'refused');
      answer(ctx, deps.smsProvider, smsReplies.tooLong(SMS_MAX_CHARACTERS, characters));
      return;
    }
    const command = parseSmsCommand(sms.body);
    deps.metrics.smsCommand(command.kind);
    let text: string | undefined;
    try {
      text = await run(command, sms, deps);
      deps.metrics.event('twilio', 'sms', command.kind === 'opt-in-keyword' ? 'ignored' : 'processed');
    } catch (err) {
      const appError = toAppError(err);
      if (appError.status < 500) throw err;
      deps.metrics.event('twilio', 'sms', 'failed');
      deps.logger.error({ err: appError.cause ?? err, command: command.kind }, 'SMS command failed');
      text = smsReplies.tryLater();
    }
    answer(ctx, deps.smsProvider, text);
  };
}

function answer(ctx: Koa.Context, smsProvider: SmsProvider, text: string | undefined): void {
  const reply = smsProvider.reply(text);
  ctx.type = reply.contentType;
  ctx.body = reply.body;
}
