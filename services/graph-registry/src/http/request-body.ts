import type Koa from 'koa';
import { badRequest } from '@sp/core';
import { readBody } from '@sp/http';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * The request body as UTF-8 text. Checks run in a fixed order: media type (415), then size —
 * the declared Content-Length at once, a streamed body while it arrives (413), both in the
 * platform's readBody — then encoding (400).
 */
export async function readTextBody(ctx: Koa.Context, options: { limitBytes: number; types: readonly string[] }): Promise<string> {
  const body = await readBody(ctx, options);
  try {
    return utf8.decode(body);
  } catch {
    throw badRequest('body must be UTF-8 text');
  }
}
