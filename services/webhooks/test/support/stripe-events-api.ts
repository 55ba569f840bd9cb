import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { closeGracefully, listen } from '@sp/http';
import { infra } from '../../../../test/support/infra.js';

/** One `GET /v1/events` call as the stand-in received it. */
export interface ListEventsRequest {
  createdGte: number | undefined;
  types: string[];
  startingAfter: string | undefined;
  limit: number;
}

/**
 * A stand-in for Stripe's events API, which stripe-mock cannot serve (it keeps no state: every
 * list answers one fixed fixture). It answers `GET /v1/events` and `GET /v1/events/{id}` from the
 * events the test put in, in Stripe's wire format (a list object newest first, `has_more`,
 * `starting_after`, `created[gte]`, `types[]`, `limit` up to 100; `resource_missing` 404), and
 * forwards every other request to stripe-mock unchanged. The service's `PAYMENT_PROVIDER_API_URL`
 * points here instead of at stripe-mock.
 */
export interface StripeEventsApi {
  url: string;
  /** Makes `event` (a Stripe event envelope) listable and retrievable. */
  add(event: Record<string, unknown>): void;
  /** The list calls received, in order. */
  readonly listRequests: ListEventsRequest[];
  /** The next `count` events API calls answer 500 `api_error`. */
  failNext(count: number): void;
  reset(): void;
  close(): Promise<void>;
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_standin_${Date.now()}` });
  res.end(JSON.stringify(body));
}

const stripeError = (type: string, message: string, extra: Record<string, string> = {}): unknown => ({ error: { type, message, ...extra } });

/** `types[]=a&types[]=b` and the library's `types[0]=a&types[1]=b` alike. */
function parseListQuery(query: URLSearchParams): ListEventsRequest {
  const types = [...query.entries()].filter(([key]) => /^types\[\d*\]$/.test(key)).map(([, value]) => value);
  const gte = query.get('created[gte]');
  return {
    createdGte: gte === null ? undefined : Number(gte),
    types,
    startingAfter: query.get('starting_after') ?? undefined,
    limit: Math.min(100, Math.max(1, Number(query.get('limit') ?? '10'))),
  };
}

/** Stripe lists newest first; events of the same second stay in the order they were added. */
const created = (event: Record<string, unknown>): number => event.created as number;

export async function startStripeEventsApi(stripeMockUrl = infra('STRIPE_MOCK_URL')): Promise<StripeEventsApi> {
  let events: Record<string, unknown>[] = [];
  let failures = 0;
  const listRequests: ListEventsRequest[] = [];
  const upstream = new URL(stripeMockUrl);

  const listEvents = (res: ServerResponse, query: URLSearchParams): void => {
    const params = parseListQuery(query);
    listRequests.push(params);
    const matching = events.filter((event) => (params.createdGte === undefined || created(event) >= params.createdGte) && (params.types.length === 0 || params.types.includes(event.type as string)));
    let start = 0;
    if (params.startingAfter !== undefined) {
      const index = matching.findIndex((event) => event.id === params.startingAfter);
      if (index < 0) return sendJson(res, 400, stripeError('invalid_request_error', `No such event: '${params.startingAfter}'`, { param: 'starting_after', code: 'resource_missing' }));
      start = index + 1;
    }
    const page = matching.slice(start, start + params.limit);
    sendJson(res, 200, { object: 'list', url: '/v1/events', has_more: start + params.limit < matching.length, data: page });
  };

  const forward = (req: IncomingMessage, res: ServerResponse): void => {
    const proxied = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    proxied.on('error', () => sendJson(res, 502, stripeError('api_error', 'stripe-mock unreachable')));
    req.pipe(proxied);
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const match = /^\/v1\/events(?:\/([^/]+))?$/.exec(url.pathname);
    if (match === null || req.method !== 'GET') return forward(req, res);
    if (failures > 0) {
      failures -= 1;
      return sendJson(res, 500, stripeError('api_error', 'An unknown error occurred (stand-in failure)'));
    }
    if (match[1] === undefined) return listEvents(res, url.searchParams);
    const id = decodeURIComponent(match[1]);
    const event = events.find((candidate) => candidate.id === id);
    if (event === undefined) return sendJson(res, 404, stripeError('invalid_request_error', `No such event: '${id}'`, { param: 'id', code: 'resource_missing' }));
    sendJson(res, 200, event);
  });
  const port = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}`,
    add(event) {
      events = [...events.filter((candidate) => candidate.id !== event.id), event].sort((a, b) => created(b) - created(a));
    },
    listRequests,
    failNext(count) {
      failures = count;
    },
    reset() {
      events = [];
      failures = 0;
      listRequests.length = 0;
    },
    close: () => closeGracefully(server, 1000),
  };
}
