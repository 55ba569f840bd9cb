import type Koa from 'koa';
import { badRequest, forbidden, toAppError } from '@sp/core';
import { readBody } from '@sp/http';
import { confirmAnnouncement, draftAnnouncement, type AnnouncementDeps, type IncomingMessage } from './announcements.js';
import type { ProcessingStore } from '../events/processing-store.js';
import { defaultProcessOnceOptions, processOnce, type ProcessOnceOptions } from '../events/process-once.js';
import type { SmsProvider } from './sms-provider.js';
import { commandLabel, parseSmsCommand, type SmsCommand } from './sms-commands.js';
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
  /** Webhooks__PublicBaseUrl: the signed URL is `{publicBaseUrl}{path as called}?{query as called}`. */
  publicBaseUrl: string;
  links: ReplyLinks;
  /** Remembers processed MessageSids (the store shared by the replicas, as for payment events). */
  processing: ProcessingStore;
  /** How long a MessageSid is remembered: a replay within it is a duplicate. */
  messageRetentionMs: number;
  processOnceOptions?: ProcessOnceOptions;
  /** The clock, Unix ms: when a command arrived. */
  now: () => number;
}

interface IncomingSms extends IncomingMessage {
  body: string;
  /** Twilio's `OptOutType` (Advanced Opt-Out): STOP, START or HELP when it handled the message as a keyword. */
  optOutType: string | undefined;
}

/** Twilio's message SIDs: `SM` (SMS) or `MM` (MMS) and 32 hex digits. */
const MESSAGE_SID = /^(SM|MM)[0-9a-fA-F]{32}$/;

/**
 * Twilio signs the URL it called, exactly as configured in its console: the path as called (a
 * trailing slash or another letter case included, both of which the router serves) and the query
 * as received, on the public base URL (the address outside any ingress). A signature for any other
 * path is refused, so the one signed request is valid on the one path it was sent to.
 */
function checkSignature(ctx: Koa.Context, params: Record<string, string>, deps: SmsWebhookDeps): void {
  if (!deps.validateSignature) return;
  const url = `${deps.publicBaseUrl}${ctx.path}${ctx.querystring === '' ? '' : `?${ctx.querystring}`}`;
  const signature = ctx.get('x-twilio-signature');
  if (deps.smsProvider.verifySignature(url, params, signature === '' ? undefined : signature)) return;
  deps.metrics.signatureFailure('twilio');
  throw forbidden('invalid signature');
}

function incomingSms(params: Record<string, string>, deps: SmsWebhookDeps): IncomingSms {
  if (params.AccountSid !== deps.accountSid) throw forbidden('message for another account');
  const from = params.From?.trim();
  if (from === undefined || from === '') throw badRequest('From is required');
  // Every message is processed once by its id: one that has none (or another shape) cannot be.
  const messageSid = params.MessageSid ?? '';
  if (!MESSAGE_SID.test(messageSid)) throw badRequest('MessageSid must be a Twilio message SID (SM or MM and 32 hex digits)');
  return { from, body: params.Body ?? '', messageSid, optOutType: params.OptOutType };
}

function run(command: SmsCommand, sms: IncomingSms, deps: SmsWebhookDeps): Promise<string | undefined> {
  switch (command.kind) {
    case 'provider-keyword':
      return Promise.resolve(undefined);
    case 'commands':
      return Promise.resolve(smsReplies.commands(deps.links));
    case 'unsub':
      return unsubscribe(sms.from, command.clientNumber, deps);
    case 'confirm':
      return confirmAnnouncement(sms, deps);
    case 'draft':
      return draftAnnouncement(sms, command.text, deps);
  }
}

/**
 * Runs the command and answers its reply; a dependency failing is answered with "try again later"
 * (the provider does not redeliver incoming messages, and the sender sends a new one), so the
 * message counts as processed either way and a replay of it is a duplicate.
 */
async function reply(command: SmsCommand, sms: IncomingSms, deps: SmsWebhookDeps): Promise<string | undefined> {
  try {
    const text = await run(command, sms, deps);
    deps.metrics.event('twilio', 'sms', command.kind === 'provider-keyword' ? 'ignored' : 'processed');
    return text;
  } catch (err) {
    return tryLater(err, deps, { command: command.kind, messageSid: sms.messageSid });
  }
}

/** A dependency's failure (5xx) as the "try again later" reply, logged and counted; anything else is rethrown. */
function tryLater(err: unknown, deps: SmsWebhookDeps, context: Record<string, string>): string {
  const appError = toAppError(err);
  if (appError.status < 500) throw err;
  deps.metrics.event('twilio', 'sms', 'failed');
  deps.logger.error({ err: appError.cause ?? err, ...context }, 'SMS not processed');
  return smsReplies.tryLater();
}

/**
 * The command run at most once per MessageSid, across replicas and replays (Twilio's signatures
 * never expire, so a captured request verifies forever): a replay within the retention is answered
 * with an empty response and does nothing. The store failing before the command runs: try later.
 */
async function replyOnce(command: SmsCommand, sms: IncomingSms, deps: SmsWebhookDeps): Promise<{ duplicate: boolean; text: string | undefined }> {
  const options = { ...(deps.processOnceOptions ?? defaultProcessOnceOptions), retentionMs: deps.messageRetentionMs };
  try {
    const outcome = await processOnce(deps.processing, `twilio-message:${sms.messageSid}`, () => reply(command, sms, deps), options);
    return outcome.duplicate ? { duplicate: true, text: undefined } : { duplicate: false, text: outcome.value };
  } catch (err) {
    return { duplicate: false, text: tryLater(err, deps, { messageSid: sms.messageSid, failed: 'store of processed messages' }) };
  }
}

/**
 * POST /api/SmsProviderWebhookHandler (after the `code` check). Order: media type (415), size
 * (413), signature (403), account (403), sender and MessageSid (400), message length (a reply
 * saying it is too long), then the command, once per MessageSid. The answer is TwiML: a reply
 * SMS, or an empty `<Response/>` for Twilio's keywords and for a message processed before. When
 * a dependency fails the sender is asked to try again later (200 with that reply: the provider
 * would not redeliver anyway).
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
    const command = parseSmsCommand(sms.body, sms.optOutType);
    deps.metrics.smsCommand(commandLabel(command));
    const { duplicate, text } = await replyOnce(command, sms, deps);
    if (duplicate) {
      deps.metrics.event('twilio', 'sms', 'duplicate');
      deps.logger.info({ messageSid: sms.messageSid, command: command.kind }, 'SMS processed before (a replay or a repeated delivery): nothing done');
    }
    answer(ctx, deps.smsProvider, text);
  };
}

function answer(ctx: Koa.Context, smsProvider: SmsProvider, text: string | undefined): void {
  const reply = smsProvider.reply(text);
  ctx.type = reply.contentType;
  ctx.body = reply.body;
}
