import { badRequest } from '@sp/platform';
import type { CacheRequest } from '@sp/cache-client';

export const MAX_KEY_BYTES = 1024;

export function validateKey(request: Partial<CacheRequest>): string {
  const key = request.key ?? '';
  if (key === '') throw badRequest('key is required');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES) throw badRequest(`key exceeds ${MAX_KEY_BYTES} bytes`);
  return key;
}

export function validateSet(request: Partial<CacheRequest>, maxValueBytes: number): { key: string; value: Buffer; ttlMs: number } {
  const key = validateKey(request);
  const ttlMs = request.ttlMs ?? 0;
  if (!Number.isSafeInteger(ttlMs) || ttlMs < 0) throw badRequest('ttl_ms must be zero or a positive number of milliseconds');
  const value = request.value ?? Buffer.alloc(0);
  if (value.length > maxValueBytes) throw badRequest(`value exceeds ${maxValueBytes} bytes`);
  return { key, value, ttlMs };
}
