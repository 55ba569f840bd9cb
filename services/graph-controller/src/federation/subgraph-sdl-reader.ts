import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, backoffDelay } from '@sp/core';
import { createHttpClient, ResponseTooLarge, type HttpClient } from '@sp/http';

/** The Apollo Federation subgraph spec's root field (`_service { sdl }`): a public field name, not a private member. */
const SERVICE_FIELD = '_service';

/** How the controller reads a subgraph's schema. */
export interface SdlReaderOptions {
  /** Bound of one request. */
  timeoutMs: number;
  /** Requests per read before it fails (the reconcile then retries with its own backoff). */
  attempts: number;
  /** Backoff between attempts: from `baseMs`, doubling. */
  backoff: { baseMs: number; maxMs: number };
  /** Largest answer accepted: the registry's own limit for a schema (1 MiB). */
  maxBytes: number;
  http?: HttpClient;
}

export const DEFAULT_SDL_READER: Omit<SdlReaderOptions, 'http'> = { timeoutMs: 5000, attempts: 3, backoff: { baseMs: 200, maxMs: 2000 }, maxBytes: 1024 * 1024 };

/** The Apollo Federation subgraph query: every subgraph answers it with its SDL. */
const SERVICE_QUERY = JSON.stringify({ query: '{ _service { sdl } }' });

/** Reads a subgraph's SDL at its URL. Rejects with a 502 AppError (unreachable, an error answer, no SDL, too large). */
export type SdlReader = (url: string, signal?: AbortSignal) => Promise<string>;

const failure = (url: string, reason: string, cause?: unknown): AppError => new AppError(502, 'subgraph_unreadable', `subgraph ${url}: ${reason}`, { cause });

async function readOnce(http: HttpClient, url: string, options: SdlReaderOptions, signal: AbortSignal | undefined): Promise<string> {
  let answer;
  try {
    answer = await http.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json' },
      body: SERVICE_QUERY,
      timeoutMs: options.timeoutMs,
      maxBytes: options.maxBytes,
      ...(signal === undefined ? {} : { signal }),
    });
  } catch (err) {
    if (err instanceof ResponseTooLarge) throw failure(url, `the schema is larger than ${options.maxBytes} bytes`, err);
    throw failure(url, 'no answer to { _service { sdl } }', err);
  }
  if (answer.status !== 200) throw failure(url, `answered ${answer.status} to { _service { sdl } }`);
  let sdl: unknown;
  try {
    sdl = (JSON.parse(answer.text) as { data?: Record<string, { sdl?: unknown } | undefined> }).data?.[SERVICE_FIELD]?.sdl;
  } catch (err) {
    throw failure(url, 'answered { _service { sdl } } with something that is not JSON', err);
  }
  if (typeof sdl !== 'string' || sdl.trim() === '') throw failure(url, 'answered { _service { sdl } } without an SDL (is it a federation subgraph?)');
  return sdl;
}

/**
 * Reads SDLs with `{ _service { sdl } }`: a bounded request (time, size), tried again with backoff
 * a few times, since a subgraph that just started (the endpoints changed) may not answer yet.
 */
export function createSdlReader(options: SdlReaderOptions): SdlReader {
  const http = options.http ?? createHttpClient(4);
  return async (url, signal) => {
    for (let attempt = 1; ; attempt += 1) {
      try {
        return await readOnce(http, url, options, signal);
      } catch (err) {
        if (attempt >= options.attempts || signal?.aborted === true) throw err;
        await sleep(backoffDelay(attempt, options.backoff.baseMs, options.backoff.maxMs), undefined, signal === undefined ? {} : { signal });
      }
    }
  };
}
