import type { IncomingMessage, RequestListener } from 'node:http';
import { trace } from '@opentelemetry/api';
import type Koa from 'koa';
import type { RecordRequest } from '@sp/observability';

/**
 * A GET route answered before Koa (`HttpServiceOptions.directRoutes`), for a hot path whose answer
 * can be known from memory at once: the headers of its 200 with an empty body (a flat list, names
 * and values in turn, as `writeHead` takes them), or undefined to hand the request to Koa, which
 * then handles it as if this did not exist. The same list object for the same answer (the full
 * header list is assembled once per list). The Koa route of the same path answers the same case
 * with `answerEmpty`, so that both send the same answer.
 */
export type DirectRoute = (req: IncomingMessage) => readonly string[] | undefined;

/**
 * What Koa adds to a 200 whose body is set to `''`; a direct answer sends the same, so a client
 * (or a proxy) cannot tell which path answered.
 */
const EMPTY_BODY_HEADERS = ['Content-Type', 'text/plain; charset=utf-8', 'Content-Length', '0'];

/** Answers a Koa request with 200, these headers (a flat list as a DirectRoute returns it) and an empty body. */
export function answerEmpty(ctx: Koa.Context, headers: readonly string[]): void {
  for (let i = 0; i < headers.length; i += 2) ctx.res.setHeader(headers[i]!, headers[i + 1]!);
  ctx.body = '';
}

/** The path of a request target in origin form, without its query (what Koa's `ctx.path` is for such a target). */
const pathOf = (url: string): string => {
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
};

/** A direct route's answer; undefined when it throws, so that Koa handles the request (and maps the error as always). */
function tryRoute(route: DirectRoute, req: IncomingMessage): readonly string[] | undefined {
  try {
    return route(req);
  } catch {
    return undefined;
  }
}

/**
 * The request listener of `createHttpService` with direct routes: a GET of one of their paths goes
 * to its route first, everything else (and whatever the route leaves) to `handle`, the Koa app.
 */
export function directListener(handle: RequestListener, routes: ReadonlyMap<string, DirectRoute>, appHeaders: readonly string[], record: RecordRequest): RequestListener {
  const assembled = new WeakMap<readonly string[], string[]>();
  const allHeaders = (own: readonly string[]): string[] => {
    let all = assembled.get(own);
    if (all === undefined) assembled.set(own, (all = [...appHeaders, ...own, ...EMPTY_BODY_HEADERS]));
    return all;
  };
  return (req, res) => {
    const started = performance.now();
    const path = req.method === 'GET' ? pathOf(req.url ?? '') : '';
    const route = routes.get(path);
    const own = route === undefined || trace.getActiveSpan() !== undefined ? undefined : tryRoute(route, req);
    if (own === undefined) return handle(req, res);
    res.writeHead(200, allHeaders(own));
    // Counted before the answer is written, as the front middleware counts a Koa answer.
    record('GET', path, 200, (performance.now() - started) / 1000);
    res.end();
  };
}
