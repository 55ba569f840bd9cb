/**
 * The command's exit statuses. 1 is a verdict on what was asked (the schema is invalid or
 * breaking, the registry refused it, the name or version does not exist): a pipeline stops the
 * change. Every other failure has a status of its own, so a pipeline can tell "your schema breaks
 * clients" from "the registry could not be asked" and retry only the latter.
 */
export const EXIT = {
  done: 0,
  verdict: 1,
  usage: 2,
  /** The registry refused the API key (401). */
  keyRefused: 3,
  /** No connection: refused, unknown host, TLS failure. */
  unreachable: 4,
  /** No complete answer within --timeout. */
  timeout: 5,
  /** The connection closed or was reset before the answer was complete. */
  interrupted: 6,
  /** A 5xx answer: the registry failed, or a proxy in front of it did (502, 503, 504). */
  serverError: 7,
  /** An answer that is not the registry's API: another content type (a proxy's HTML page), malformed JSON, an unexpected status. */
  unexpectedAnswer: 8,
  /** A fault of the command itself (a bug): one line, no stack trace. */
  internal: 9,
} as const;

export type ExitStatus = (typeof EXIT)[keyof typeof EXIT];
