import { describe, expect, it } from '@jest/globals';
import { status } from '@grpc/grpc-js';
import { asGrpcError, encodeGrpcMessage, MAX_STATUS_MESSAGE_BYTES } from '../src/grpc-status.js';
import { parseGrpcTimeout } from '../src/grpc-timeout.js';

describe('grpc-timeout', () => {
  it.each([
    ['1H', 3_600_000],
    ['2M', 120_000],
    ['3S', 3000],
    ['250m', 250],
    ['1500u', 1.5],
    ['99999999n', 99.999999],
    ['0m', 0],
  ])('should read %s as %d ms', (header, ms) => {
    expect(parseGrpcTimeout(header)).toBeCloseTo(ms, 9);
  });

  it('should tell an absent header (no deadline) from a malformed one', () => {
    expect(parseGrpcTimeout(undefined)).toBeUndefined();
    for (const header of ['', 'abc', '10', '123456789S', '-1S', '1.5S', '10s', '10 S']) expect(parseGrpcTimeout(header)).toBeNaN();
    expect(parseGrpcTimeout(['1S', '2S'])).toBeNaN();
  });
});

describe('grpc-message', () => {
  it('should percent-encode what grpc-js clients decode back exactly', () => {
    for (const details of ['plain ASCII, with 50% and a # sign', 'clé é ✓ 😀', 'line\nbreak', '']) {
      expect(decodeURI(encodeGrpcMessage(details))).toBe(details);
      expect(encodeGrpcMessage(details)).toMatch(/^[\x21-\x7e]*$/);
    }
  });

  it('should replace a lone surrogate instead of throwing', () => {
    expect(decodeURI(encodeGrpcMessage('a\ud800b'))).toBe('a\ufffdb');
  });

  it.each([
    ['ASCII', 'a'.repeat(10_000)],
    ['characters of 4 UTF-8 bytes', '😀'.repeat(5000)],
    ['a mix', 'é😀 %'.repeat(3000)],
  ])('should cut a long message (%s) to at most MAX_STATUS_MESSAGE_BYTES, at a character, so that it still decodes', (_case, details) => {
    const encoded = encodeGrpcMessage(details);
    expect(encoded.length).toBeLessThanOrEqual(MAX_STATUS_MESSAGE_BYTES);
    expect(encoded.length).toBeGreaterThan(MAX_STATUS_MESSAGE_BYTES / 2);
    expect(details.startsWith(decodeURI(encoded))).toBe(true);
  });
});

describe("a handler's error as a status", () => {
  it("should take grpc-js' { code, details }, and never an Error's message", () => {
    expect(asGrpcError({ code: status.NOT_FOUND, details: 'no such key' })).toEqual({ code: status.NOT_FOUND, details: 'no such key' });
    expect(asGrpcError(Object.assign(new Error('/var/lib/secret.db: permission denied'), { code: status.INTERNAL }))).toEqual({ code: status.INTERNAL, details: '' });
    expect(asGrpcError(new Error('ECONNREFUSED 10.0.0.7:6379'))).toEqual({ code: status.UNKNOWN, details: 'Unknown error' });
  });

  it('should make anything without a valid error code UNKNOWN', () => {
    for (const error of [{ code: 0, details: 'ok?' }, { code: 17 }, { code: 2.5 }, { code: '5' }, 'text', 42]) {
      expect(asGrpcError(error)).toEqual({ code: status.UNKNOWN, details: 'Unknown error' });
    }
  });
});
