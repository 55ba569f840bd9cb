import { describe, expect, it } from '@jest/globals';
import { MAX_CLIENT_NUMBER, parseClientNumber, parseSmsCommand } from '../src/sms-commands.js';

describe('parseSmsCommand', () => {
  it.each([
    ['STOP', { kind: 'opt-in-keyword' }],
    ['  help ', { kind: 'opt-in-keyword' }],
    ['Unstop', { kind: 'opt-in-keyword' }],
    ['start', { kind: 'opt-in-keyword' }],
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
    ['Ｓｔｏｐ', { kind: 'opt-in-keyword' }],
    ['CON\u200bFIRM', { kind: 'draft', text: 'CON\u200bFIRM' }],
    ['Ｓａｌｅ ５０％', { kind: 'draft', text: 'Ｓａｌｅ ５０％' }],
  ])('should read %j as %j', (body, command) => {
    expect(parseSmsCommand(body)).toEqual(command);
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
