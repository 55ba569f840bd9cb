import { status as GrpcStatus } from '@grpc/grpc-js';

/**
 * The one error type of the platform. `status` is an HTTP status; `code` is a stable,
 * machine-readable identifier; `expose` says whether the message may be shown to the caller
 * (only client errors are: a 5xx answer never carries internal details).
 */
export class AppError extends Error {
  readonly status: number;
  readonly code: string;
  readonly expose: boolean;
  /** Extra response headers, e.g. Retry-After on 429. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * A stable, documented code the caller may act on (answered as `reason` beside `error`), for
   * endpoints whose refusals differ in what the caller should do. Unset: the body is `{error}` only.
   */
  readonly reason: string | undefined;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { cause?: unknown; headers?: Record<string, string>; reason?: string } = {},
  ) {
    super(message, { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.expose = status < 500;
    this.headers = options.headers ?? {};
    this.reason = options.reason;
  }
}

export const badRequest = (message: string): AppError => new AppError(400, 'bad_request', message);
export const unauthorized = (message = 'unauthorized'): AppError =>
  new AppError(401, 'unauthorized', message);
/** Authenticated, but not allowed to do this. */
export const forbidden = (message: string): AppError => new AppError(403, 'forbidden', message);
export const notFound = (message = 'not found'): AppError => new AppError(404, 'not_found', message);
export const payloadTooLarge = (limitBytes: number): AppError =>
  new AppError(413, 'payload_too_large', `body exceeds ${limitBytes} bytes`);
export const unsupportedMediaType = (allowed: readonly string[]): AppError =>
  new AppError(415, 'unsupported_media_type', `content type must be one of: ${allowed.join(', ')}`);
export const tooManyRequests = (retryAfterSeconds: number): AppError =>
  new AppError(429, 'too_many_requests', 'too many requests', {
    headers: { 'Retry-After': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });
/** The request is well formed but the state it acts on forbids it (gRPC FAILED_PRECONDITION). */
export const failedPrecondition = (message: string): AppError => new AppError(412, 'failed_precondition', message);
/**
 * A dependency answered, but with something unusable: an error of its own, a refusal, a malformed
 * answer. What went wrong travels in `cause`, to the logs only (a 5xx never shows its details).
 */
export const badGateway = (dependency: string, cause?: unknown): AppError =>
  new AppError(502, 'bad_gateway', `${dependency} answered with an error`, { cause });
/** A dependency (store, broker, identity provider) cannot be reached. */
export const unavailable = (dependency: string, cause?: unknown): AppError =>
  new AppError(503, 'unavailable', `${dependency} is unavailable`, { cause });

const codeByStatus: Readonly<Record<number, string>> = {
  401: 'unauthorized',
  404: 'not_found',
  405: 'method_not_allowed',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
  429: 'too_many_requests',
};

/** Anything thrown that is not an AppError becomes an unexposed 500. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  // Errors of Koa and its body parsers (http-errors) carry status and expose.
  if (isExposedHttpError(err)) return new AppError(err.status, codeByStatus[err.status] ?? 'bad_request', err.message, { cause: err });
  return new AppError(500, 'internal', 'internal server error', { cause: err });
}

function isExposedHttpError(err: unknown): err is Error & { status: number } {
  if (!(err instanceof Error) || !('status' in err) || !('expose' in err)) return false;
  return typeof err.status === 'number' && err.status >= 400 && err.status < 500 && err.expose === true;
}

const grpcByHttp: Readonly<Record<number, GrpcStatus>> = {
  400: GrpcStatus.INVALID_ARGUMENT,
  401: GrpcStatus.UNAUTHENTICATED,
  403: GrpcStatus.PERMISSION_DENIED,
  404: GrpcStatus.NOT_FOUND,
  409: GrpcStatus.ALREADY_EXISTS,
  412: GrpcStatus.FAILED_PRECONDITION,
  413: GrpcStatus.INVALID_ARGUMENT,
  429: GrpcStatus.RESOURCE_EXHAUSTED,
  503: GrpcStatus.UNAVAILABLE,
  504: GrpcStatus.DEADLINE_EXCEEDED,
};

/** The gRPC status object for an error: unexposed errors become UNKNOWN with no details. */
export function toGrpcStatus(err: unknown): { code: GrpcStatus; details: string } {
  const appError = toAppError(err);
  if (appError.status >= 500 && appError.status !== 503 && appError.status !== 504) {
    return { code: GrpcStatus.UNKNOWN, details: 'internal error' };
  }
  return { code: grpcByHttp[appError.status] ?? GrpcStatus.UNKNOWN, details: appError.message };
}
