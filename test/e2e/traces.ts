import { SpanKind, type ReceivedSpan } from '../support/otlp-receiver.js';

/** The W3C `traceparent` header split into its trace id and parent (span) id. */
export function parseTraceparent(header: string | undefined): { traceId: string; parentId: string } | undefined {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[0-9a-f]$/.exec(header ?? '');
  return match === null ? undefined : { traceId: match[1]!, parentId: match[2]! };
}

/** Server spans of `service` for `METHOD /path` (stable HTTP semantic conventions: the path without its query). */
export function serverSpans(spans: readonly ReceivedSpan[], service: string, method: string, path: string): ReceivedSpan[] {
  return spans.filter(
    (span) => span.service === service && span.kind === SpanKind.server && span.attributes['http.request.method'] === method && span.attributes['url.path'] === path,
  );
}

/** Whether `span` is `ancestor` or below it, following parent ids within one trace. */
export function descendsFrom(spans: readonly ReceivedSpan[], span: ReceivedSpan, ancestor: ReceivedSpan): boolean {
  const byId = new Map(spans.filter((candidate) => candidate.traceId === ancestor.traceId).map((candidate) => [candidate.spanId, candidate]));
  for (let current: ReceivedSpan | undefined = span; current !== undefined; current = byId.get(current.parentSpanId ?? '')) {
    if (current.spanId === ancestor.spanId) return true;
  }
  return false;
}

export interface CacheCall {
  /** The caller's gRPC client span. */
  client: ReceivedSpan;
  /** The cache service's gRPC server span, a child of `client`. */
  server: ReceivedSpan;
}

const CACHE_METHOD = /^grpc\.cache\.v1\.CacheGrpcService\/(Get|Set|Remove)$/;

/** The calls to the cache service made while handling `request` (a server span of the caller): client span → cache server span. */
export function cacheCallsUnder(spans: readonly ReceivedSpan[], request: ReceivedSpan): CacheCall[] {
  const clients = spans.filter(
    (span) => span.service === request.service && span.kind === SpanKind.client && CACHE_METHOD.test(span.name) && span.traceId === request.traceId && descendsFrom(spans, span, request),
  );
  return clients.flatMap((client) =>
    spans
      .filter((span) => span.service === 'cache' && span.kind === SpanKind.server && span.traceId === client.traceId && span.parentSpanId === client.spanId)
      .map((server) => ({ client, server })),
  );
}

/** The span a Kafka event's traceparent names (the producer's send span), when it was received. */
export function producerSpanOf(spans: readonly ReceivedSpan[], traceparent: string | undefined): ReceivedSpan | undefined {
  const parsed = parseTraceparent(traceparent);
  return parsed && spans.find((span) => span.traceId === parsed.traceId && span.spanId === parsed.parentId);
}
