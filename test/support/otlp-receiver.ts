import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** OTLP span kinds (SPAN_KIND_…). */
export const SpanKind = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

/** A received span with its service and attributes flattened. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
}
interface OtlpAttribute {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: OtlpAttribute[];
}
export interface OtlpTraces {
  resourceSpans?: Array<{ resource?: { attributes?: OtlpAttribute[] }; scopeSpans?: Array<{ spans?: OtlpSpan[] }> }>;
}

export interface OtlpReceiver {
  /** The base URL for `Otlp__Endpoint` (spans arrive at `{url}/v1/traces`). */
  url: string;
  readonly spans: readonly ReceivedSpan[];
  /** Requests that were not OTLP JSON traces (content type and path), to tell a wrong setup apart from no spans. */
  readonly rejected: readonly string[];
  /** Resolves once `predicate` holds over the spans received so far. */
  waitFor(what: string, predicate: (spans: readonly ReceivedSpan[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

function valueOf(value: OtlpValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.doubleValue ?? value.boolValue ?? '';
}

const flatten = (attributes: OtlpAttribute[] = []): Record<string, string | number | boolean> =>
  Object.fromEntries(attributes.map((attribute) => [attribute.key, valueOf(attribute.value)]));

/** The spans of an OTLP/JSON traces message (an export request, or a line of the collector's file exporter). */
export function spansOf(request: OtlpTraces): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(flatten(resourceSpans.resource?.attributes)['service.name'] ?? '');
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => ({
        service,
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId === '' ? undefined : span.parentSpanId,
        name: span.name,
        kind: span.kind,
        attributes: flatten(span.attributes),
      })),
    );
  });
}

/**
 * A collector's OTLP/HTTP receiver, JSON encoding only (what the platform exports): `POST
 * /v1/traces` with `application/json` answers `200 {}` and keeps the spans.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const rejected: string[] = [];
  const handle = (req: IncomingMessage, res: ServerResponse, body: string): void => {
    const type = req.headers['content-type'] ?? '';
    if (req.method === 'POST' && req.url === '/v1/traces' && type.startsWith('application/json')) {
      spans.push(...spansOf(JSON.parse(body) as OtlpTraces));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      return;
    }
    rejected.push(`${req.method} ${req.url} ${type}`);
    res.writeHead(415).end();
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => handle(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    rejected,
    async waitFor(what, predicate, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(spans)) {
        if (Date.now() > deadline) throw new Error(`${what}: not among the ${spans.length} spans received within ${timeoutMs} ms`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
