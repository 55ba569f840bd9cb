import { badRequest } from '@sp/core';

/** Where a page of the event log ended: the last entry's first-seen time and id (ids break ties). */
export interface LogPosition {
  score: number;
  id: string;
}

/** An opaque cursor for the admin API's `next`. */
export const encodeLogCursor = (position: LogPosition): string => Buffer.from(`${position.score}:${position.id}`).toString('base64url');

/** The position a cursor names; 400 when it is not one this service made. */
export function decodeLogCursor(cursor: string): LogPosition {
  const match = /^(\d+):(.+)$/.exec(Buffer.from(cursor, 'base64url').toString());
  if (match === null) throw badRequest('cursor: not a cursor returned by this API');
  return { score: Number(match[1]), id: match[2]! };
}
