/** What an incoming SMS asks for, in the order the service tests for it. */
export type SmsCommand =
  /** stop, start, unstop, help: the provider's opt-out handling answers these; the service does nothing. */
  | { kind: 'opt-in-keyword' }
  | { kind: 'commands' }
  /** `clientNumber` undefined: the digits name no possible client number (beyond the gateway's Int). */
  | { kind: 'unsub'; clientNumber: number | undefined }
  | { kind: 'confirm' }
  /** Anything else: a client's announcement draft (the trimmed text as sent). */
  | { kind: 'draft'; text: string };

/** The largest client number: the gateway's `Int` (32-bit signed). */
export const MAX_CLIENT_NUMBER = 2_147_483_647;

const OPT_IN_KEYWORDS = new Set(['stop', 'start', 'unstop', 'help']);
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
 * Classifies a message body. Keywords and commands are matched on the trimmed text in Unicode
 * NFKC form (so full-width `ＣＯＮＦＩＲＭ` or `UNSUB ３`, as some phone keyboards type them, are the
 * commands), case-insensitive and whole (so a draft that merely mentions "confirm" stays a draft).
 * A draft keeps the text as sent. An empty message gets the command list, as there is nothing to draft.
 */
export function parseSmsCommand(body: string): SmsCommand {
  const text = body.trim();
  const command = text.normalize('NFKC').trim();
  if (OPT_IN_KEYWORDS.has(command.toLowerCase())) return { kind: 'opt-in-keyword' };
  if (command === '' || COMMANDS.test(command)) return { kind: 'commands' };
  const unsub = UNSUB.exec(command);
  if (unsub) return { kind: 'unsub', clientNumber: parseClientNumber(unsub[1]!) };
  if (CONFIRM.test(command)) return { kind: 'confirm' };
  return { kind: 'draft', text };
}
