import { Writable } from 'node:stream';
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../src/logger.js';

function capture(): { lines: () => Array<Record<string, unknown>>; raw: () => string; stream: Writable } {
  let text = '';
  const stream = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      text += chunk.toString();
      callback();
    },
  });
  return {
    stream,
    raw: () => text,
    lines: () => text.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>),
  };
}

const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJlLXNpZ25hdHVyZQ';

describe('createLogger', () => {
  it('should write one JSON line per event with service and level', () => {
    const out = capture();
    createLogger({ service: 'auth', destination: out.stream }).info({ route: '/otp' }, 'hello');
    expect(out.lines()).toEqual([expect.objectContaining({ service: 'auth', level: 'info', msg: 'hello', route: '/otp' })]);
  });

  it('should redact a token inside a message and under secret keys at any depth', () => {
    const out = capture();
    const logger = createLogger({ service: 'auth', destination: out.stream });
    logger.info(`exchanged code, got ${jwt}`);
    logger.info({ user: { accessToken: jwt, password: 'hunter2', otp: '123456' }, headers: { authorization: `Bearer ${jwt}`, 'x-api-key': 'k-1' } }, 'login');
    logger.info({ url: '/api/PaymentProviderWebhookHandler?code=super-secret-key&x=1' }, 'request');
    logger.warn({ err: new Error(`upstream said Bearer abc.def.ghi for ${jwt}`) }, 'failed');
    const raw = out.raw();
    for (const secret of [jwt, 'hunter2', '123456', 'k-1', 'super-secret-key', 'abc.def.ghi']) expect(raw).not.toContain(secret);
    const [first, second, third, fourth] = out.lines();
    expect(first!.msg).toBe('exchanged code, got [REDACTED]');
    expect(second).toMatchObject({ user: { accessToken: '[REDACTED]', password: '[REDACTED]', otp: '[REDACTED]' }, headers: { authorization: '[REDACTED]', 'x-api-key': '[REDACTED]' } });
    expect(third!.url).toBe('/api/PaymentProviderWebhookHandler?code=[REDACTED]&x=1');
    expect(fourth).toMatchObject({ err: { type: 'Error', message: 'upstream said Bearer [REDACTED] for [REDACTED]' } });
  });
});
