// The OpenTelemetry Collector example (observability/otel-collector/config.yaml) in a real
// collector: built from the Go module proxy with every component the example names
// (test/infra/otelcol.sh), its own `validate` run on the example, and the example run with only
// the cluster-bound parts swapped (support/otel-collector.ts) while the services export their
// spans to it during the end-to-end journey. The test reads what the collector wrote (file
// exporter) and follows the traces across services and into Kafka.
import { randomInt, randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { demoData } from '../../scripts/local-platform.js';
import { gatewayContractSdl } from '../support/graphql-gateway.js';
import { SpanKind, type ReceivedSpan } from '../support/otlp-receiver.js';
import { collectorConfig, startCollector, validateCollectorConfig, type RunningCollector } from '../support/otel-collector.js';
import { stepRecord, PAYMENT_WEBHOOK_PATH, type JourneyPlan, type JourneyRecord } from './journey.js';
import { runJourneyOn, type JourneyRun } from './journey-run.js';
import { startTestPlatform, type TestPlatform } from './test-platform.js';
import { cacheCallsUnder, descendsFrom, parseTraceparent, serverSpans } from './traces.js';
import { HANG_GUARD_MS } from '../support/progress.js';

const run = randomUUID().slice(0, 8);
const plan: JourneyPlan = {
  phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
  graph: { name: `otelcol-e2e-${run}`, url: '', schema: `# registered by the collector journey ${run}\n${gatewayContractSdl}` },
  client: demoData.client,
  subscribers: demoData.subscribers,
  announcement: `Demo Fitness: pilates on Sunday (run ${run})`,
};

let collector: RunningCollector | undefined;
let platform: TestPlatform | undefined;
let record: JourneyRecord;
let journey: JourneyRun | undefined;

beforeAll(async () => {
  collector = await startCollector();
  platform = await startTestPlatform({ otlpEndpoint: collector.otlpHttpUrl });
  journey = await runJourneyOn(platform, plan);
  record = journey.record;
}, HANG_GUARD_MS);

afterAll(async () => {
  await platform?.stop();
  await collector?.stop();
  await journey?.cleanUp();
}, 30_000);

/** The spans once the collector has written those `find` looks for (SDK and collector batch every 5 s). */
async function written<T>(what: string, find: (spans: readonly ReceivedSpan[]) => T | undefined): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const spans = collector!.receivedSpans();
    const found = find(spans);
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`${what}: not among the ${spans.length} spans the collector wrote within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** The producer span of `service` sending to `topic` below `request`, in its trace. */
const producerUnder = (spans: readonly ReceivedSpan[], request: ReceivedSpan, topic: string): ReceivedSpan | undefined =>
  spans.find((span) => span.service === request.service && span.kind === SpanKind.producer && span.name === `send ${topic}` && span.traceId === request.traceId && descendsFrom(spans, span, request));

describe('the OpenTelemetry Collector example in a real collector', () => {
  it("should pass the collector's own validate, which refuses a pipeline naming an unknown component", async () => {
    const valid = await validateCollectorConfig([collectorConfig]);
    expect({ code: valid.code, output: valid.output.split('\n').filter((line) => /error/i.test(line)) }).toEqual({ code: 0, output: [] });
    const dir = mkdtempSync(join(tmpdir(), 'sp-otelcol-validate-'));
    try {
      const broken = join(dir, 'config.yaml');
      writeFileSync(broken, readFileSync(collectorConfig, 'utf8').replace('exporters: [otlp/traces]', 'exporters: [otlp/tempo]'));
      const refused = await validateCollectorConfig([broken]);
      expect(refused.code).not.toBe(0);
      expect(refused.output).toContain('otlp/tempo');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should complete the journey with every service exporting to the collector', () => {
    expect(record.failures.map(({ step, title, error }) => `${step}. ${title}: ${error.message}`)).toEqual([]);
  });

  it('should receive one trace from POST /otp of auth through the cache service into the Kafka event', async () => {
    const login = stepRecord(record, 'login');
    const traceId = parseTraceparent(login.smsEvent.headers.traceparent)!.traceId;
    const { request, calls, producer } = await written('auth POST /otp → cache → send notifications', (spans) => {
      const otp = serverSpans(spans, 'auth', 'POST', '/otp').find((span) => span.traceId === traceId);
      const found = otp && { request: otp, calls: cacheCallsUnder(spans, otp), producer: producerUnder(spans, otp, 'notifications') };
      return found && found.calls.length > 0 && found.producer !== undefined ? found : undefined;
    });
    expect(calls.map(({ server }) => ({ service: server.service, traceId: server.traceId }))).toContainEqual({ service: 'cache', traceId: request.traceId });
    expect(producer).toMatchObject({ service: 'auth', traceId: request.traceId });
    expect(parseTraceparent(login.smsEvent.headers.traceparent)!.parentId).toBe(producer!.spanId);
  }, 40_000);

  it('should receive one trace from the Stripe webhook through the GraphQL gateway into the Kafka event', async () => {
    const payment = stepRecord(record, 'payment');
    const traceId = parseTraceparent(payment.paymentConfirmedEvent.headers.traceparent)!.traceId;
    const gateway = new URL(platform!.gateway.url);
    const { request, gatewayCalls, producer } = await written('webhooks → gateway → send Payments', (spans) => {
      const webhook = serverSpans(spans, 'webhooks', 'POST', PAYMENT_WEBHOOK_PATH).find((span) => span.traceId === traceId);
      if (webhook === undefined) return undefined;
      const calls = spans.filter(
        (span) => span.service === 'webhooks' && span.kind === SpanKind.client && String(span.attributes['url.full'] ?? '').startsWith(gateway.origin) && descendsFrom(spans, span, webhook),
      );
      const sent = producerUnder(spans, webhook, 'Payments');
      return calls.length > 0 && sent !== undefined ? { request: webhook, gatewayCalls: calls, producer: sent } : undefined;
    });
    expect(gatewayCalls.map((span) => ({ traceId: span.traceId, method: span.attributes['http.request.method'] }))).toContainEqual({ traceId: request.traceId, method: 'POST' });
    expect(producer).toMatchObject({ service: 'webhooks', traceId: request.traceId });
    expect(parseTraceparent(payment.paymentConfirmedEvent.headers.traceparent)!.parentId).toBe(producer.spanId);
  }, 40_000);
});
