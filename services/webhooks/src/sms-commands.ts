/** What an incoming SMS asks for, in the order the service tests for it. */
export type SmsCommand =
  /** stop, start, unstop, help: the provider's opt-out handling answers these; the service does nothing. */
  | { kind: 'opt-in-keyword' }
  | { kind: 'commands' }
  | { kind: 'unsub'; clientNumber: number }
  | { kind: 'confirm' }
  /** Anything else: a client's announcement draft. */
  | { kind: 'draft'; text: string };

const OPT_IN_KEYWORDS = new Set(['stop', 'start', 'unstop', 'help']);
const COMMANDS = /^commands$/i;
const UNSUB = /^unsub\s+(\d{1,9})$/i;
const CONFIRM = /^confirm$/i;

/**
 * Classifies a message body. Keywords and commands are matched on the trimmed text, case-insensitive
 * and whole (so a draft that merely mentions "confirm" stays a draft). An empty message gets the
 * command list, as there is nothing to draft.
 */
export function parseSmsCommand(body: string): SmsCommand {
  const text = body.trim();
  if (OPT_IN_KEYWORDS.has(text.toLowerCase())) return { kind: 'opt-in-keyword' };
  if (text === '' || COMMANDS.test(text)) return { kind: 'commands' };
  const unsub = UNSUB.exec(text);
  if (unsub) return { kind: 'unsub', clientNumber: Number(unsub[1]) };
  if (CONFIRM.test(text)) return { kind: 'confirm' };
  return { kind: 'draft', text };
}
