import { describe, expect, it } from '@jest/globals';
import { parseSmsCommand } from '../src/sms-commands.js';

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
  ])('should read %j as %j', (body, command) => {
    expect(parseSmsCommand(body)).toEqual(command);
  });
});
