import type { Entry } from './store.js';

/**
 * Both backends keep an entry as one byte string: an 8-byte big-endian expiry (Unix ms, 0 for
 * none) followed by the value. Redis thus returns value and expiry with one GET, and the memory
 * backend holds one compact string per entry instead of a Buffer and an object.
 */
export const HEADER_BYTES = 8;

export function encodeEntry(value: Buffer, expiresAtUnixMs: number): Buffer {
  const stored = Buffer.allocUnsafe(HEADER_BYTES + value.length);
  stored.writeBigUInt64BE(BigInt(expiresAtUnixMs), 0);
  value.copy(stored, HEADER_BYTES);
  return stored;
}

export function decodeEntry(stored: Buffer): Entry {
  return { expiresAtUnixMs: Number(stored.readBigUInt64BE(0)), value: stored.subarray(HEADER_BYTES) };
}

/** Latin-1 maps each byte to one character, so V8 stores the string at one byte per byte. */
export const toCompactString = (stored: Buffer): string => stored.toString('latin1');
export const fromCompactString = (compact: string): Buffer => Buffer.from(compact, 'latin1');

/**
 * The expiry alone, read from the string's first 8 characters (one byte each) without copying
 * anything: every read of the memory backend checks it, so it allocates no Buffer and no BigInt.
 * Expiries are Unix ms, far below 2^53, so the sum is exact.
 */
export function expiryOfCompact(compact: string): number {
  let expiresAt = 0;
  for (let i = 0; i < HEADER_BYTES; i++) expiresAt = expiresAt * 256 + compact.charCodeAt(i);
  return expiresAt;
}
