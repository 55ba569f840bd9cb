import { pino, type Logger, type DestinationStream } from 'pino';
import { endableLogDestination } from '@sp/core';

export type { Logger } from 'pino';

const REDACTED = '[REDACTED]';

/** Keys whose values are never logged, whatever their depth. */
const SECRET_KEY =
  /^(authorization|cookie|set-cookie|password|passwd|secret|client_?secret|.*token|token.*|api[-_]?key|x-api-key|otp|otp_?code|code_?verifier|x-twilio-signature|stripe-signature|signature)$/i;

/** Values that look like secrets wherever they appear: JWTs, bearer credentials, sensitive query parameters. */
const SECRET_PATTERNS: ReadonlyArray<[RegExp, string]> = [
  [/\beyJ[\w-]{5,}\.[\w-]{5,}\.[\w-]*/g, REDACTED],
  [/\b(Bearer|Basic)\s+[\w\-.~+/=]+/gi, `$1 ${REDACTED}`],
  [/([?&](?:code|state|token|access_token|id_token|api_?key|key|secret|password|session_state)=)[^&#\s"]*/gi, `$1${REDACTED}`],
  [/(TokenId=)[^;\s"]*/g, `$1${REDACTED}`],
];

export function scrub(text: string): string {
  let result = text;
  for (const [pattern, replacement] of SECRET_PATTERNS) result = result.replace(pattern, replacement);
  return result;
}

function redact(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return scrub(value);
  if (value === null || typeof value !== 'object' || depth > 6) return value;
  if (value instanceof Error) return redactError(value, depth);
  if (Array.isArray(value)) return value.map((item) => redact(item, depth + 1));
  return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, redactEntry(key, item, depth)]));
}

function redactEntry(key: string, value: unknown, depth: number): unknown {
  if (SECRET_KEY.test(key) && value !== undefined && value !== null) return REDACTED;
  return redact(value, depth + 1);
}

/** A scrubbed copy that is still an instance of the error's class, so pino's serializer names its type. */
function redactError(error: Error, depth: number): Error {
  const copy = Object.create(Object.getPrototypeOf(error) as object) as Error;
  Object.assign(copy, redact({ ...error }, depth));
  Object.defineProperty(copy, 'message', { value: scrub(error.message), enumerable: false });
  Object.defineProperty(copy, 'stack', { value: error.stack === undefined ? undefined : scrub(error.stack), enumerable: false });
  if (error.cause !== undefined) Object.defineProperty(copy, 'cause', { value: redact(error.cause, depth + 1), enumerable: false });
  return copy;
}

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Where lines go; standard output by default. Tests pass a stream to read them. */
  destination?: DestinationStream;
}

/**
 * A JSON logger (one line an event) that redacts secrets, tokens, OTP codes and API keys,
 * both under well-known keys and inside free text, so a careless log call cannot leak them.
 */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      base: { service: options.service },
      level: options.level ?? 'info',
      messageKey: 'msg',
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: {
        level: (label) => ({ level: label }),
        log: (object) => redact(object) as Record<string, unknown>,
      },
      hooks: {
        logMethod(args, method) {
          method.apply(this, args.map((arg) => (typeof arg === 'string' ? scrub(arg) : arg)) as Parameters<typeof method>);
        },
      },
    },
    options.destination ?? standardOutput(),
  );
}

/** Standard output, written asynchronously; a shutdown ends it within its grace period (endLogs). */
function standardOutput(): DestinationStream {
  return endableLogDestination(pino.destination({ sync: false }));
}
