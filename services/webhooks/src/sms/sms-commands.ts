/** Twilio's keyword classes: the provider answers these itself (and blocks or unblocks the sender). */
export type ProviderKeyword = 'opt-out' | 'opt-in' | 'help';

/** What an incoming SMS asks for, in the order the service tests for it. */
export type SmsCommand =
  /** One of Twilio's opt-out, opt-in or help keywords: the provider has answered it; the service does nothing. */
  | { kind: 'provider-keyword'; keyword: ProviderKeyword }
  | { kind: 'commands' }
  /** `clientNumber` undefined: the digits name no possible client number (beyond the gateway's Int). */
  | { kind: 'unsub'; clientNumber: number | undefined }
  | { kind: 'confirm' }
  /** Anything else: a client's announcement draft (the text as sent, without its invisible ends). */
  | { kind: 'draft'; text: string };

/** The largest client number: the gateway's `Int` (32-bit signed). */
export const MAX_CLIENT_NUMBER = 2_147_483_647;

/**
 * Twilio's default keywords (Messaging: "Twilio support for opt-out keywords (SMS STOP filtering)"
 * and the Advanced Opt-Out guide), matched as Twilio matches them: the whole message, one word,
 * any case ("STOP" opts out, "STOP the music" does not).
 */
export const PROVIDER_KEYWORDS: Readonly<Record<ProviderKeyword, readonly string[]>> = {
  'opt-out': ['STOP', 'STOPALL', 'UNSUBSCRIBE', 'CANCEL', 'END', 'QUIT', 'REVOKE', 'OPTOUT'],
  'opt-in': ['START', 'YES', 'UNSTOP'],
  help: ['HELP', 'INFO'],
};
const KEYWORD_CLASS = new Map(Object.entries(PROVIDER_KEYWORDS).flatMap(([keyword, words]) => words.map((word): [string, ProviderKeyword] => [word.toLowerCase(), keyword as ProviderKeyword])));
/** Twilio's `OptOutType` parameter (Advanced Opt-Out: sent with every keyword it handled, custom ones included). */
const OPT_OUT_TYPES: Readonly<Record<string, ProviderKeyword>> = { STOP: 'opt-out', START: 'opt-in', HELP: 'help' };

/**
 * Characters that show nothing: Unicode White_Space (which includes U+0085, kept by
 * `String.prototype.trim`), Default_Ignorable_Code_Point (zero-width spaces and joiners, the
 * Hangul fillers U+115F, U+1160, U+3164 and U+FFA0, variation selectors, tags, bidirectional
 * marks, the soft hyphen), the other control characters, and the braille blank U+2800, which is
 * neither but prints as nothing.
 */
const INVISIBLE = '[\\p{White_Space}\\p{Default_Ignorable_Code_Point}\\p{Cc}\\u2800]';
const INVISIBLE_ENDS = new RegExp(`^${INVISIBLE}+|${INVISIBLE}+$`, 'gu');

/** The text without the invisible characters at either end: '' when nothing in it is visible. */
export const visibleText = (text: string): string => text.replace(INVISIBLE_ENDS, '');

const COMMANDS = /^commands$/i;
/** Any count of ASCII digits: the number is read below, so `UNSUB 0000000001` and `UNSUB 99999999999` are both the command. */
const UNSUB = /^unsub\s+([0-9]+)$/i;
const CONFIRM = /^confirm$/i;

/**
 * The one way a client number is read: decimal ASCII digits, leading zeros ignored (`007` is 7);
 * more than the gateway's largest Int is no client number (undefined), never a rounded or wrapped one.
 */
export function parseClientNumber(digits: string): number | undefined {
  const significant = digits.replace(/^0+(?=.)/, '');
  if (significant.length > String(MAX_CLIENT_NUMBER).length) return undefined;
  const value = Number(significant);
  return value <= MAX_CLIENT_NUMBER ? value : undefined;
}

/**
 * Classifies a message body. Keywords and commands are matched on the text without its invisible
 * ends, in Unicode NFKC form (so full-width `ＣＯＮＦＩＲＭ` or `UNSUB ３`, as some phone keyboards
 * type them, are the commands), case-insensitive and whole (so a draft that merely mentions
 * "confirm" stays a draft). `optOutType` is Twilio's own verdict (`OptOutType`), which covers
 * keywords configured in its console. A draft keeps the text as sent. A message with nothing
 * visible gets the command list, as there is nothing to draft.
 */
export function parseSmsCommand(body: string, optOutType?: string): SmsCommand {
  const providerVerdict = OPT_OUT_TYPES[optOutType?.trim().toUpperCase() ?? ''];
  if (providerVerdict !== undefined) return { kind: 'provider-keyword', keyword: providerVerdict };
  const text = visibleText(body);
  const command = visibleText(text.normalize('NFKC'));
  const keyword = KEYWORD_CLASS.get(command.toLowerCase());
  if (keyword !== undefined) return { kind: 'provider-keyword', keyword };
  if (command === '' || COMMANDS.test(command)) return { kind: 'commands' };
  const unsub = UNSUB.exec(command);
  if (unsub) return { kind: 'unsub', clientNumber: parseClientNumber(unsub[1]!) };
  if (CONFIRM.test(command)) return { kind: 'confirm' };
  return { kind: 'draft', text };
}

/** The label of a command in `sms_commands_total`: a provider keyword by its class (`opt-out`, `opt-in`, `help`). */
export const commandLabel = (command: SmsCommand): string => (command.kind === 'provider-keyword' ? command.keyword : command.kind);
