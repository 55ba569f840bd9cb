import { SpanStatusCode, trace, type Attributes } from '@opentelemetry/api';

const tracer = trace.getTracer('subscription-platform');

/**
 * Runs `work` in a span of its own (a child of the active one), for work no instrumentation sees
 * start, such as a timer's periodic job; its outbound calls become the span's children. The span
 * records a rejection as an error. Without tracing (no `Otlp__Endpoint`) the span is a no-op.
 */
export function withSpan<T>(name: string, attributes: Attributes, work: () => Promise<T>): Promise<T> {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return await work();
    } catch (err) {
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SpanStatusCode.ERROR });
      throw err;
    } finally {
      span.end();
    }
  });
}
