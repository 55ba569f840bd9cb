import type Koa from 'koa';
import { unauthorized } from '@sp/core';
import { readSessionCookie } from '../sessions/session-cookie.js';
import type { TokenRecord, TokenStore } from '../sessions/token-store.js';

/** The caller's own session, from its TokenId cookie. */
export interface Caller {
  tokenId: string;
  record: TokenRecord;
}

/** The caller's live session, or 401: what every /sessions endpoint acts for (never anyone else). */
export async function callerSession(ctx: Koa.Context, deps: { tokens: TokenStore; now: () => number }): Promise<Caller> {
  const tokenId = readSessionCookie(ctx.headers);
  const record = await deps.tokens.get(tokenId);
  if (record === undefined || record.sessionEndsAtMs <= deps.now()) throw unauthorized();
  return { tokenId: tokenId!, record };
}
