import type Koa from 'koa';
import { badRequest } from '@sp/core';
import { readBody } from '@sp/http';

/** Largest JSON body accepted (413 above). The bodies of this API are a few dozen bytes. */
export const JSON_BODY_LIMIT_BYTES = 16 * 1024;

/**
 * The request body as a JSON object: 415 unless it is declared JSON, 413 past the limit (the
 * declared length at once, a streamed body while it arrives), 400 when it is not an object.
 */
export async function readJsonObject(ctx: Koa.Context): Promise<Record<string, unknown>> {
  const raw = await readBody(ctx, { limitBytes: JSON_BODY_LIMIT_BYTES, types: ['application/json'] });
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw badRequest('body must be a JSON object');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw badRequest('body must be a JSON object');
  return parsed as Record<string, unknown>;
}
