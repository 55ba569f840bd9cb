import { constants as h2, type IncomingHttpHeaders, type OutgoingHttpHeaders } from 'node:http2';
import { status as GrpcStatus } from '@grpc/grpc-js';
import { OK_HEADERS } from './call.js';
import { statusHeaders } from './grpc-status.js';
import type { Route } from './routes.js';

/**
 * A method path made of proto identifiers. Only such a path is named back in a status message:
 * anything else a client puts in `:path` stays out of what the server says.
 */
const METHOD_PATH = /^\/[A-Za-z_][\w.]{0,200}\/[A-Za-z_]\w{0,100}$/;

/** PROTOCOL-HTTP2: a request that is not gRPC gets an HTTP status, so a plain HTTP client does not read a gRPC error's 200 as success. */
const UNSUPPORTED_MEDIA_TYPE: OutgoingHttpHeaders = { ':status': h2.HTTP_STATUS_UNSUPPORTED_MEDIA_TYPE };
const METHOD_NOT_ALLOWED: OutgoingHttpHeaders = {
  ...OK_HEADERS,
  ':status': h2.HTTP_STATUS_METHOD_NOT_ALLOWED,
  ...statusHeaders({ code: GrpcStatus.INTERNAL, details: 'gRPC requests use the POST method' }),
};
const UNSUPPORTED_ENCODING: OutgoingHttpHeaders = {
  ...OK_HEADERS,
  'grpc-accept-encoding': 'identity',
  ...statusHeaders({ code: GrpcStatus.UNIMPLEMENTED, details: 'This server accepts uncompressed messages only (grpc-encoding identity)' }),
};
export const INVALID_TIMEOUT: OutgoingHttpHeaders = { ...OK_HEADERS, ...statusHeaders({ code: GrpcStatus.INTERNAL, details: 'Invalid grpc-timeout' }) };

/** `application/grpc` or `application/grpc+proto`, in any case (media types are case-insensitive): the codecs this server has. */
function isGrpcContentType(contentType: string | undefined): boolean {
  if (contentType === 'application/grpc' || contentType === 'application/grpc+proto') return true;
  if (contentType === undefined || contentType.length > 22) return false;
  const lower = contentType.toLowerCase();
  return lower === 'application/grpc' || lower === 'application/grpc+proto';
}

function unimplemented(path: string | undefined): OutgoingHttpHeaders {
  const named = path !== undefined && METHOD_PATH.test(path);
  return { ...OK_HEADERS, ...statusHeaders({ code: GrpcStatus.UNIMPLEMENTED, details: named ? `The server does not implement the method ${path}` : 'The server does not implement this method' }) };
}

/**
 * Why a new stream is refused before it is read, as the answer's headers, or undefined when it is
 * a call this server takes: content-type first (a client that does not speak gRPC gets HTTP 415
 * and no gRPC status, as grpc-go answers), then the method (POST), the path, the message encoding.
 */
export function refusalOf(headers: IncomingHttpHeaders, route: Route | undefined): OutgoingHttpHeaders | undefined {
  if (!isGrpcContentType(headers['content-type'])) return UNSUPPORTED_MEDIA_TYPE;
  if (headers[':method'] !== 'POST') return METHOD_NOT_ALLOWED;
  if (route === undefined) return unimplemented(headers[':path']);
  const encoding = headers['grpc-encoding'];
  if (encoding !== undefined && encoding !== 'identity') return UNSUPPORTED_ENCODING;
  return undefined;
}
