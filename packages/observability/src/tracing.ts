import { register } from 'node:module';
import { parseEnv, env, type Env } from '@sp/core';
import { onFinalShutdown } from '@sp/core';

export interface Tracing {
  shutdown(): Promise<void>;
}

/**
 * Starts OTLP tracing when `Otlp__Endpoint` is set, and does nothing otherwise. Spans go to
 * `{Otlp__Endpoint}/v1/traces` over OTLP/HTTP with JSON encoding (the Collector's 4318 receiver).
 *
 * ES modules are instrumented through a loader hook, which only sees modules imported after
 * it is registered: a service therefore loads this from a file given to `node --import`
 * (its `instrument.ts`, which awaits this), before its main module imports anything.
 *
 * The SDK and the instrumentations are imported only when tracing is on: loaded, they hold about
 * 25 MB of heap (84 MB of RSS) that a process without tracing would carry for nothing, and that
 * every full garbage collection marks again (the cache's CPU per call, issue 39).
 */
export async function startTracing(serviceName: string, environment: Env = process.env): Promise<Tracing | undefined> {
  const config = parseEnv({ Otlp__Endpoint: env.url(['http', 'https']).optional() }, environment);
  if (config.Otlp__Endpoint === undefined) return undefined;
  register('import-in-the-middle/hook.mjs', import.meta.url);
  const [
    { NodeSDK },
    { OTLPTraceExporter },
    { resourceFromAttributes },
    { ATTR_SERVICE_NAME },
    { HttpInstrumentation },
    { UndiciInstrumentation },
    { GrpcInstrumentation },
    { IORedisInstrumentation },
    { KafkaJsInstrumentation },
    { KoaInstrumentation },
  ] = await Promise.all([
    import('@opentelemetry/sdk-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'),
    import('@opentelemetry/instrumentation-http'),
    import('@opentelemetry/instrumentation-undici'),
    import('@opentelemetry/instrumentation-grpc'),
    import('@opentelemetry/instrumentation-ioredis'),
    import('@opentelemetry/instrumentation-kafkajs'),
    import('@opentelemetry/instrumentation-koa'),
  ]);
  const sdk = new NodeSDK({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }),
    traceExporter: new OTLPTraceExporter({ url: `${config.Otlp__Endpoint.replace(/\/$/, '')}/v1/traces` }),
    // Metrics are Prometheus' (/metrics). Without this the SDK adds an OTLP metrics exporter aimed
    // at localhost:4318 whose final flush retries until the shutdown grace period runs out.
    metricReaders: [],
    instrumentations: [
      new HttpInstrumentation(),
      new UndiciInstrumentation(),
      new GrpcInstrumentation(),
      new IORedisInstrumentation(),
      new KafkaJsInstrumentation(),
      new KoaInstrumentation(),
    ],
  });
  sdk.start();
  // onShutdown (shutdown.ts) runs this after the service's own steps, so the last spans are flushed.
  onFinalShutdown(() => sdk.shutdown());
  return { shutdown: () => sdk.shutdown() };
}
