import type { OutgoingHttpHeaders } from 'node:http2';
import { status as GrpcStatus } from '@grpc/grpc-js';

/** A call's outcome that is not OK, as the trailers carry it. */
export interface GrpcError {
  code: GrpcStatus;
  details: string;
}

/**
 * The longest `grpc-message` sent, percent-encoded. A status message is one header among the
 * trailers; gRPC core refuses metadata past 8 KiB and many proxies far less, so a long one could
 * cost the client the status itself.
 */
export const MAX_STATUS_MESSAGE_BYTES = 1024;

/**
 * The `grpc-message` header: percent-encoded as grpc-js' server does (`encodeURI`, which its
 * clients undo with `decodeURI`; other clients percent-decode it), a lone surrogate replaced first
 * (U+FFFD) since encodeURI throws on one, and cut to MAX_STATUS_MESSAGE_BYTES (at a character, so
 * that it still decodes).
 */
export function encodeGrpcMessage(details: string): string {
  const text = details.replace(/\p{Surrogate}/gu, '\uFFFD');
  let encoded = encodeURI(text);
  if (encoded.length <= MAX_STATUS_MESSAGE_BYTES) return encoded;
  const characters = [...text];
  let kept = characters.length;
  while (encoded.length > MAX_STATUS_MESSAGE_BYTES) {
    kept = Math.floor((kept * MAX_STATUS_MESSAGE_BYTES) / encoded.length);
    encoded = encodeURI(characters.slice(0, kept).join(''));
  }
  return encoded;
}

/** A call's status as trailers (or, Trailers-Only, its only HEADERS frame) carry it. */
export const statusHeaders = (error: GrpcError): OutgoingHttpHeaders => ({ 'grpc-status': String(error.code), 'grpc-message': encodeGrpcMessage(error.details) });

/**
 * The status a handler's error stands for: grpc-js' `{ code, details }` (or an Error carrying
 * them). Only `details` is the handler's own text for the client; an Error's `message` never goes
 * out (it may hold anything: a file path, a dependency's answer), and anything without a valid
 * code is UNKNOWN.
 */
export function asGrpcError(error: unknown): GrpcError {
  const { code, details } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; details?: unknown };
  // The codes an error may carry: CANCELLED (1) to UNAUTHENTICATED (16); OK is no error.
  const known = typeof code === 'number' && Number.isInteger(code) && code >= 1 && code <= 16;
  if (!known) return { code: GrpcStatus.UNKNOWN, details: 'Unknown error' };
  return { code, details: typeof details === 'string' ? details : '' };
}
