import { register } from 'node:module';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { GrpcInstrumentation } from '@opentelemetry/instrumentation-grpc';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { KafkaJsInstrumentation } from '@opentelemetry/instrumentation-kafkajs';
import { KoaInstrumentation } from '@opentelemetry/instrumentation-koa';
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
 * (its `instrument.ts`), before its main module imports anything.
 */
export function startTracing(serviceName: string, environment: Env = process.env): Tracing | undefined {
  const config = parseEnv({ Otlp__Endpoint: env.url(['http', 'https']).optional() }, environment);
  if (config.Otlp__Endpoint === undefined) return undefined;
  register('import-in-the-middle/hook.mjs', import.meta.url);
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
