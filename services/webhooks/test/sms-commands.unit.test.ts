import { describe, expect, it } from '@jest/globals';
import { codePoints, INVISIBLE_BODIES } from './support/invisible-bodies.js';
import { MAX_CLIENT_NUMBER, parseClientNumber, parseSmsCommand, PROVIDER_KEYWORDS, visibleText } from '../src/sms/sms-commands.js';

describe('parseSmsCommand', () => {
  it.each([
    ['STOP', { kind: 'provider-keyword', keyword: 'opt-out' }],
    ['  help ', { kind: 'provider-keyword', keyword: 'help' }],
    ['Unstop', { kind: 'provider-keyword', keyword: 'opt-in' }],
    ['start', { kind: 'provider-keyword', keyword: 'opt-in' }],
    ['\u200bQuit\u0085', { kind: 'provider-keyword', keyword: 'opt-out' }],
    // Twilio matches one word, the whole message: anything more is a message like any other.
    ['STOP the music', { kind: 'draft', text: 'STOP the music' }],
    ['Yes please', { kind: 'draft', text: 'Yes please' }],
    ['INFO: open till 9', { kind: 'draft', text: 'INFO: open till 9' }],
    ['COMMANDS', { kind: 'commands' }],
    ['', { kind: 'commands' }],
    ['UNSUB 3', { kind: 'unsub', clientNumber: 3 }],
    ['unsub   42', { kind: 'unsub', clientNumber: 42 }],
    ['CONFIRM', { kind: 'confirm' }],
    [' confirm\n', { kind: 'confirm' }],
    ['Please CONFIRM your order', { kind: 'draft', text: 'Please CONFIRM your order' }],
    ['UNSUB 3 now', { kind: 'draft', text: 'UNSUB 3 now' }],
    ['help me', { kind: 'draft', text: 'help me' }],
    ['  New hours: 9-5  ', { kind: 'draft', text: 'New hours: 9-5' }],
    // Numbers: any count of digits is the command; leading zeros are ignored; beyond the gateway's Int is no client.
    ['UNSUB 0000000001', { kind: 'unsub', clientNumber: 1 }],
    ['UNSUB 007', { kind: 'unsub', clientNumber: 7 }],
    ['UNSUB 0', { kind: 'unsub', clientNumber: 0 }],
    ['UNSUB 2147483647', { kind: 'unsub', clientNumber: MAX_CLIENT_NUMBER }],
    ['UNSUB 2147483648', { kind: 'unsub', clientNumber: undefined }],
    ['UNSUB 99999999999999999999', { kind: 'unsub', clientNumber: undefined }],
    [`UNSUB ${'0'.repeat(1500)}12`, { kind: 'unsub', clientNumber: 12 }],
    ['UNSUB -3', { kind: 'draft', text: 'UNSUB -3' }],
    ['UNSUB 1e3', { kind: 'draft', text: 'UNSUB 1e3' }],
    ['UNSUB 3.0', { kind: 'draft', text: 'UNSUB 3.0' }],
    // Unicode: full-width forms and other spaces are the commands (NFKC); a draft keeps its text as sent.
    ['ＵＮＳＵＢ\u3000３', { kind: 'unsub', clientNumber: 3 }],
    ['unsub\u00a012', { kind: 'unsub', clientNumber: 12 }],
    ['ＣＯＮＦＩＲＭ', { kind: 'confirm' }],
    ['Ｓｔｏｐ', { kind: 'provider-keyword', keyword: 'opt-out' }],
    ['CON\u200bFIRM', { kind: 'draft', text: 'CON\u200bFIRM' }],
    ['Ｓａｌｅ ５０％', { kind: 'draft', text: 'Ｓａｌｅ ５０％' }],
  ])('should read %j as %j', (body, command) => {
    expect(parseSmsCommand(body)).toEqual(command);
  });
});

/** Every keyword of Twilio's lists, as phones send them: upper, lower and title case, with spaces and line breaks around. */
const keywordForms = Object.entries(PROVIDER_KEYWORDS).flatMap(([keyword, words]) =>
  words.flatMap((word) => [word, word.toLowerCase(), `${word[0]}${word.slice(1).toLowerCase()}`, ` \t${word}\r\n`].map((body) => [body, keyword] as const)),
);

describe('Twilio keywords', () => {
  it.each(keywordForms)('should read %j as a %s keyword, which the provider answers', (body, keyword) => {
    expect(parseSmsCommand(body)).toEqual({ kind: 'provider-keyword', keyword });
  });

  it('should follow Twilio\'s own OptOutType (its Advanced Opt-Out keywords, e.g. a Spanish one) whatever the body says', () => {
    expect(parseSmsCommand('ALTO', 'STOP')).toEqual({ kind: 'provider-keyword', keyword: 'opt-out' });
    expect(parseSmsCommand('AYUDA', 'HELP')).toEqual({ kind: 'provider-keyword', keyword: 'help' });
    expect(parseSmsCommand('Hola de nuevo', 'START')).toEqual({ kind: 'provider-keyword', keyword: 'opt-in' });
    expect(parseSmsCommand('ALTO', '')).toEqual({ kind: 'draft', text: 'ALTO' });
  });
});

describe('nothing visible', () => {
  it.each(INVISIBLE_BODIES.map((body) => [codePoints(body), body]))('should read %s, which shows nothing, as an empty message (the command list), never as a draft', (_name, body) => {
    expect(visibleText(body)).toBe('');
    expect(parseSmsCommand(body)).toEqual({ kind: 'commands' });
  });

  it('should keep a draft whose text is visible, without its invisible ends, and its invisible characters inside', () => {
    expect(parseSmsCommand('\u3164Sale\u200b today\u0085')).toEqual({ kind: 'draft', text: 'Sale\u200b today' });
    expect(parseSmsCommand('\u2800.')).toEqual({ kind: 'draft', text: '.' });
  });
});

describe('parseClientNumber', () => {
  it('should read every form of a number the one way: leading zeros ignored, no rounding, no wrapping', () => {
    expect(parseClientNumber('000')).toBe(0);
    expect(parseClientNumber('0002147483647')).toBe(MAX_CLIENT_NUMBER);
    expect(parseClientNumber('4294967299')).toBeUndefined(); // would wrap to 3 as a 32-bit integer
    expect(parseClientNumber('9007199254740993')).toBeUndefined(); // would round as a double
  });
});
