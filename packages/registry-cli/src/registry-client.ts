import { EXIT, type ExitStatus } from './exit-status.ts';

/** An answer of the registry: status and body (parsed when JSON). */
export interface Answer {
  status: number;
  text: string;
  json: unknown;
}

/** The registry could not be asked, or did not answer as the registry: one line, its own exit status. */
export class RegistryError extends Error {
  readonly exitStatus: ExitStatus;

  constructor(exitStatus: ExitStatus, message: string) {
    super(message);
    this.exitStatus = exitStatus;
  }
}

export interface RegistryClient {
  request(method: string, path: string, options?: { body?: string; contentType?: string; headers?: Record<string, string> }): Promise<Answer>;
}

/** The longest text of the other side a message quotes. */
const QUOTE_CHARS = 200;

/**
 * Text from the other side as one line a terminal shows as it is: control characters (line
 * breaks, escape sequences a hostile server could send) become spaces, runs of space one, and
 * the whole is cut at QUOTE_CHARS.
 */
export function oneLine(text: string): string {
  const flat = text.replace(/[\p{Cc}\p{Zl}\p{Zp}]/gu, ' ').replace(/\s+/g, ' ').trim();
  return flat.length > QUOTE_CHARS ? `${flat.slice(0, QUOTE_CHARS)}…` : flat;
}

/** A connection that ended after the request went out: the answer was cut short (or never came). */
const ENDED_CODES = /^(UND_ERR_SOCKET|ECONNRESET|EPIPE|ECONNABORTED|UND_ERR_CLOSED)$/;

const causeOf = (err: unknown): { code?: string; message: string } => {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause && typeof cause.code === 'string' ? cause.code : undefined;
  return { ...(code === undefined ? {} : { code }), message: cause instanceof Error ? cause.message : String(cause) };
};

/**
 * A failure of fetch (`answered` false: no status line yet) or of reading the answer, by what a
 * pipeline would do about it: a timeout; a connection that ended once the request was out (or the
 * answer begun); any other failure before an answer means the registry could not be reached
 * (refused, unknown host, TLS, a port fetch refuses).
 */
function transportFailure(err: unknown, url: string, timeoutMs: number, answered: boolean): RegistryError {
  if (err instanceof Error && err.name === 'TimeoutError') {
    return new RegistryError(EXIT.timeout, `no complete answer from the registry at ${url} within ${timeoutMs / 1000} s (--timeout)`);
  }
  const cause = causeOf(err);
  const detail = oneLine(cause.code === undefined ? cause.message : `${cause.code}: ${cause.message}`);
  if (answered || (cause.code !== undefined && ENDED_CODES.test(cause.code))) {
    return new RegistryError(EXIT.interrupted, `the connection to the registry at ${url} ended before its answer was complete: ${detail}`);
  }
  return new RegistryError(EXIT.unreachable, `cannot reach the registry at ${url}: ${detail}`);
}

const isJson = (contentType: string | null): boolean => /^application\/([\w.+-]*\+)?json\s*(;|$)/i.test(contentType ?? '');

/** What the answer is, for a message about one that is not the registry's: `text/html, 1234 bytes`. */
const described = (response: Response, text: string): string => `${oneLine(response.headers.get('content-type') ?? 'no content type')}, ${Buffer.byteLength(text)} bytes`;

/** The status line as sent, e.g. `502 Bad Gateway`. */
const statusLine = (response: Response): string => oneLine(`${response.status} ${response.statusText}`);

/**
 * The answer checked before any command reads it: a 401 (the key), a 5xx (whoever sent it: the
 * registry, or a proxy's 502 page), an error that is not the registry's JSON error, or a JSON
 * body that does not parse are RegistryErrors; every other answer is the caller's to read.
 */
function checked(response: Response, text: string): Answer {
  const json = isJson(response.headers.get('content-type')) ? parsed(text) : undefined;
  if (response.status === 401) throw new RegistryError(EXIT.keyRefused, 'the registry refused the API key (401 unauthorized): check --key or GRAPH_REGISTRY_API_KEY');
  if (response.status >= 500) {
    const error = errorOf(json);
    throw new RegistryError(EXIT.serverError, `the registry failed: ${statusLine(response)}${error === undefined ? ` (${described(response, text)}; not the registry's own answer: a proxy in front of it?)` : `: ${oneLine(error)}`}`);
  }
  if (json === MALFORMED) throw new RegistryError(EXIT.unexpectedAnswer, `the answer is not the registry's: ${statusLine(response)} with malformed JSON (${described(response, text)})`);
  const isError = response.status < 200 || response.status >= 300;
  if (isError && errorOf(json) === undefined) throw new RegistryError(EXIT.unexpectedAnswer, `the answer is not the registry's: ${statusLine(response)} (${described(response, text)})`);
  return { status: response.status, text, json };
}

const MALFORMED = Symbol('malformed JSON');
function parsed(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return MALFORMED;
  }
}

/**
 * The registry's public HTTP API with the caller's key. Each request, its answer read to the end,
 * has `timeoutMs`; every way it can fail is a RegistryError with its own exit status.
 */
export function createRegistryClient(url: string, key: string, timeoutMs: number): RegistryClient {
  return {
    async request(method, path, options = {}) {
      const headers: Record<string, string> = { 'x-api-key': key, ...options.headers };
      if (options.contentType !== undefined) headers['content-type'] = options.contentType;
      let answered = false;
      try {
        // One signal for the whole exchange: connecting, the status line and every byte of the body.
        const response = await fetch(`${url}${path}`, { method, headers, body: options.body ?? null, signal: AbortSignal.timeout(timeoutMs) });
        answered = true;
        return checked(response, await response.text());
      } catch (err) {
        if (err instanceof RegistryError) throw err;
        throw transportFailure(err, url, timeoutMs, answered);
      }
    },
  };
}

/** The `error` of a JSON error body. */
export function errorOf(json: unknown): string | undefined {
  return typeof json === 'object' && json !== null && 'error' in json && typeof json.error === 'string' ? json.error : undefined;
}

/** The JSON object a command expects of a success; anything else is not the registry's answer. */
export function bodyOf<T>(answer: Answer): T {
  if (typeof answer.json !== 'object' || answer.json === null) throw new RegistryError(EXIT.unexpectedAnswer, `the answer is not the registry's: ${answer.status} without the JSON body the registry sends`);
  return answer.json as T;
}
