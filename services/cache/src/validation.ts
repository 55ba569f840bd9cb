import { badRequest } from '@sp/core';
import type { CacheRequest__Output, IncrementRequest__Output } from '@sp/cache-client';
import { keysAreUtf8 } from './utf8-keys.js';

export const MAX_KEY_BYTES = 1024;
/** The longest time to live: 365 days. Longer-lived entries use 0 (no expiry). */
export const MAX_TTL_MS = 365 * 24 * 60 * 60 * 1000;

export function validateKey(request: { key: string }): string {
  const { key } = request;
  if (key === '') throw badRequest('key is required');
  // The proto's `string`: bytes that are not UTF-8 would decode to U+FFFD and share an entry.
  if (!keysAreUtf8(request)) throw badRequest('key must be valid UTF-8');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw badRequest(`key exceeds ${MAX_KEY_BYTES} bytes`);
  return key;
}

function validateTtl(ttl: number): number {
  if (!Number.isSafeInteger(ttl) || ttl < 0 || ttl > MAX_TTL_MS) {
    throw badRequest(`ttl_ms must be an integer from 0 (no expiry) to ${MAX_TTL_MS} (365 days), got ${String(ttl)}`);
  }
  return ttl;
}

/** The checked key and value of a request that carries a value (Set, SetIfAbsent, RemoveIfEquals). */
export function validateKeyAndValue(request: CacheRequest__Output, maxValueBytes: number): { key: string; value: Buffer } {
  const key = validateKey(request);
  const { value } = request;
  if (value.length > maxValueBytes) throw badRequest(`value exceeds ${maxValueBytes} bytes`);
  return { key, value };
}

/** The checked fields of a Set or SetIfAbsent request. */
export function validateSet(request: CacheRequest__Output, maxValueBytes: number): { key: string; value: Buffer; ttlMs: number } {
  const { key, value } = validateKeyAndValue(request, maxValueBytes);
  return { key, value, ttlMs: validateTtl(request.ttlMs) };
}

export function validateIncrement(request: IncrementRequest__Output): { key: string; delta: number; ttlMs: number } {
  const key = validateKey(request);
  const ttlMs = validateTtl(request.ttlMs);
  const { delta } = request;
  if (!Number.isSafeInteger(delta)) throw badRequest(`delta must be an integer from -${Number.MAX_SAFE_INTEGER} to ${Number.MAX_SAFE_INTEGER}, got ${String(delta)}`);
  return { key, delta, ttlMs };
}
