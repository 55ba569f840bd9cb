// The dashboards and alerts as a real Prometheus sees them (Debian's 2.42 server, configured by
// observability/prometheus/prometheus.local.yml with the test's ports and a 1 s scrape and
// evaluation interval; the rule file is the project's, untouched). It scrapes all five
// components while the end-to-end journey runs, then: every dashboard query answers with series,
// no alert is pending or firing while healthy, and each injected fault raises its alert.
//
// Alerts wait out their `for:` (5 to 15 minutes) before they fire; the tests end when the alert
// is active (pending, its expression true on the scraped data), and the promtool unit tests in
// observability/prometheus/alerts.test.yaml cover the step from pending to firing.
import { randomInt, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CoordinationV1Api } from '@kubernetes/client-node';
import Stripe from 'stripe';
import { createCacheClient, stringSerializer, type CacheClient } from '@sp/cache-client';
import { demoData, localSecrets } from '../../scripts/local-platform.js';
import { createKubeLeaseLock } from '../../services/graph-controller/src/kube/lease-lock.js';
import { dashboardQueries, dashboards, type Query } from '../deploy/support/promql.js';
import { eventually, sleep } from '../support/eventually.js';
import { gatewayContractSdl } from '../support/graphql-gateway.js';
import { infra } from '../support/infra.js';
import { startPrivateKafka, type PrivateKafka } from '../support/kafka-broker.js';
import { adminKubeConfig, applyObjects, ensureNamespace, uniqueName } from '../support/kube-apiserver.js';
import { prometheusConfigFor, startPrometheus, type ActiveAlert, type PrometheusServer, type ScrapeTarget } from '../support/prometheus-server.js';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server.js';
import { startAll } from '../support/start-all.js';
import { stripeEvent } from '../support/stripe-event.js';
import { PAYMENT_WEBHOOK_PATH, type JourneyPlan, type JourneyRecord } from './journey.js';
import { runJourneyOn, type JourneyRun } from './journey-run.js';
import { httpsClient } from './journey-support.js';
import { liveQueryProblems, podChoices, type DashboardVariables } from './live-queries.js';
import type { ServiceProcess } from '../support/service-process.js';
import { startPlatformService } from './platform-service.js';
import { startTestPlatform, type TestPlatform } from './test-platform.js';
import { HANG_GUARD_MS } from '../support/progress.js';

const NAMESPACE = 'e2e';
/** Where the instances that faults are injected into run, so their alerts are told apart. */
const FAULT_NAMESPACE = 'e2e-faults';
const INTERVAL_SECONDS = 1;
const variables = (pod: string): DashboardVariables => ({ namespace: NAMESPACE, pod, rateInterval: '30s' });

const run = randomUUID().slice(0, 8);
const graphService = `prom-e2e-${run}`;
const plan: JourneyPlan = {
  phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}`,
  graph: { name: `prom-e2e-journey-${run}`, url: '', schema: `# registered by the Prometheus journey ${run}\n${gatewayContractSdl}` },
  client: demoData.client,
  subscribers: demoData.subscribers,
  announcement: `Demo Fitness: new class on Monday (run ${run})`,
};

let kafka: PrivateKafka | undefined;
let redis: PrivateRedis | undefined;
let platform: TestPlatform | undefined;
let controller: ServiceProcess | undefined;
let faultCache: ServiceProcess | undefined;
let prometheus: PrometheusServer | undefined;
let cacheTraffic: { client: CacheClient<string>; timer: NodeJS.Timeout } | undefined;
let record: JourneyRecord;
const kubeNamespace = uniqueName('prom-e2e');
let journey: JourneyRun | undefined;

/** The example's annotated Service (k8s/examples/annotated-service.yaml), under a name of this run. */
async function annotatedService(): Promise<void> {
  const admin = adminKubeConfig();
  await ensureNamespace(admin, kubeNamespace);
  await applyObjects(
    admin,
    [
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: graphService, annotations: { 'graph-registry.io/name': graphService, 'graph-registry.io/port': 'http' } },
        spec: { type: 'ClusterIP', ports: [{ name: 'http', port: 8080 }] },
      } as never,
    ],
    kubeNamespace,
  );
}

function startController(registryUrl: string): Promise<ServiceProcess> {
  return startPlatformService({
    name: 'graph-controller',
    env: () => ({
      Registry__Url: registryUrl,
      Registry__ApiKey: localSecrets.registryApiKey,
      Controller__Namespaces: kubeNamespace,
      Controller__LeaseNamespace: kubeNamespace,
      POD_NAME: 'graph-controller-0',
      KUBECONFIG: infra('KUBECONFIG_PATH'),
      Shutdown__GracePeriodMs: '5000',
    }),
  });
}

/** A cache of its own on a Redis of its own, with a steady trickle of lookups, for the Redis fault. */
async function startFaultCache(redisUrl: string): Promise<ServiceProcess> {
  const cache = await startPlatformService({ name: 'cache', env: () => ({ Cache__Host: '127.0.0.1', Cache__Backend: 'redis', Cache__RedisUrl: redisUrl, Cache__KeyPrefix: `prom-e2e-${run}:` }) });
  const client = createCacheClient<string>({ address: `127.0.0.1:${cache.port}`, deadlineMs: 1000 }, stringSerializer);
  cacheTraffic = { client, timer: setInterval(() => void client.get('steady').catch(() => undefined), 100) };
  return cache;
}

function scrapeTargets(): ScrapeTarget[] {
  const own = (job: string, service: ServiceProcess, namespace = NAMESPACE): ScrapeTarget => ({ job, address: `127.0.0.1:${service.managementPort}`, namespace, pod: `${job}-${service.managementPort}` });
  return [
    ...Object.entries(platform!.services).map(([name, service]) => own(name, service)),
    own('graph-controller', controller!),
    own('cache', faultCache!, FAULT_NAMESPACE),
  ];
}

beforeAll(async () => {
  [kafka, redis] = await startAll<[PrivateKafka, PrivateRedis, void]>([
    [startPrivateKafka(), (started) => started.close()],
    [startPrivateRedis(), (started) => started.stop()],
    [annotatedService(), () => undefined],
  ]);
  // The journey's number is German: with DE monitored, the fraud row's per-country panels have data.
  platform = await startTestPlatform({ kafkaBrokers: kafka.brokers, settings: { auth: { Otp__MonitoredCountries: 'DE' } } });
  [controller, faultCache] = await startAll<[ServiceProcess, ServiceProcess]>([
    [startController(platform.targets.registry.url), (started) => started.stop(5000)],
    [startFaultCache(redis.url), (started) => started.stop(5000)],
  ]);
  prometheus = await startPrometheus(prometheusConfigFor(scrapeTargets(), INTERVAL_SECONDS));
  journey = await runJourneyOn(platform, plan);
  record = journey.record;
  // A few scrapes and evaluations after the journey, and the controller's registration done.
  await eventually(async () => ((await journey!.registryRedis.get(`graph:${graphService}`)) === null ? undefined : true), 30_000, 'the controller to register the annotated Service');
  await sleep(5 * INTERVAL_SECONDS * 1000);
}, HANG_GUARD_MS);

afterAll(async () => {
  if (cacheTraffic !== undefined) {
    clearInterval(cacheTraffic.timer);
    cacheTraffic.client.close();
  }
  await Promise.all([prometheus?.stop(), controller?.stop(5000), faultCache?.stop(5000), platform?.stop(), kafka?.close(), redis?.stop()]);
  await journey?.cleanUp();
}, 60_000);

/** Alerts that need kube-state-metrics (docs/deployment.md): no data outside a cluster, so never active here. */
const NEEDS_KUBE_STATE_METRICS = new Set(['SubscriptionPlatformNotReady']);

/**
 * The latency alerts, by the histogram their quantile reads. Their threshold is a speed, which a
 * busy machine (a second `make test` beside this one: load 14 on two cores) reaches while every
 * request succeeds — the alert is right to pend then, and speed is no test's verdict here
 * (docs/development.md; the thresholds themselves are promtool's unit tests, alerts.test.yaml).
 * What this live check still holds of them is what no load explains: a quantile past the last
 * finite bucket (a stream or a wait on nothing counted as a request), where histogram_quantile
 * answers the last finite bound.
 */
const LATENCY_ALERTS: Record<string, string> = {
  SubscriptionPlatformHighLatency: 'http_request_duration_seconds_bucket',
  SubscriptionPlatformCacheHighLatency: 'grpc_server_handling_seconds_bucket',
};

/** The highest finite bucket bound of a histogram's series for one service. */
async function lastFiniteBucket(metric: string, service: string): Promise<number> {
  const bounds = (await prometheus!.series(`${metric}{service="${service}"}`)).map((labels) => Number(labels.le)).filter(Number.isFinite);
  if (bounds.length === 0) throw new Error(`no series of ${metric} for ${service}`);
  return Math.max(...bounds);
}

const activeAlert = (name: string, labels: Record<string, string>) => async (): Promise<ActiveAlert | undefined> =>
  (await prometheus!.alerts()).find((alert) => alert.labels.alertname === name && Object.entries(labels).every(([key, value]) => alert.labels[key] === value));

describe('a real Prometheus scraping the platform during the journey', () => {
  it('should complete the journey and scrape all five components', async () => {
    expect(record.failures.map(({ step, title, error }) => `${step}. ${title}: ${error.message}`)).toEqual([]);
    const targets = await prometheus!.targets();
    expect(targets.map(({ labels, health, lastError }) => ({ job: labels.job, health, lastError })).sort((a, b) => a.job!.localeCompare(b.job!))).toEqual(
      ['auth', 'cache', 'cache', 'graph-controller', 'graph-registry', 'webhooks'].map((job) => ({ job, health: 'up', lastError: '' })),
    );
  });

  it.each(dashboards().map(({ file }) => file))('should answer every query of %s with series, naming only exported metrics and labels', async (file) => {
    const { dashboard } = dashboards().find((candidate) => candidate.file === file)!;
    const pods = await podChoices(prometheus!, dashboard, NAMESPACE);
    expect(pods.length).toBeGreaterThan(0);
    const check = async (): Promise<string[]> => {
      const problems: string[] = [];
      for (const query of dashboardQueries(file, dashboard)) problems.push(...(await liveQueryProblems(prometheus!, query, variables(pods.join('|')))));
      return problems;
    };
    // With a 1 s scrape timeout, a loaded machine can miss a few scrapes of one target, and a
    // 30 s rate window then briefly holds too few samples. A missing metric or label stays missing,
    // so a problem still there after ten more scrapes is a real one.
    let problems = await check();
    for (let tries = 0; problems.length > 0 && tries < 10; tries += 1) {
      await sleep(INTERVAL_SECONDS * 1000);
      problems = await check();
    }
    expect(problems).toEqual([]);
  });

  it('should find a metric or label the services do not export, also behind `or vector(0)` (the check works)', async () => {
    const broken: Query[] = [
      { source: 'metric', expr: '(sum(rate(http_requests_totl{service="webhooks", status=~"5.."}[$__rate_interval])) or vector(0)) / sum(rate(http_requests_total{service="webhooks"}[$__rate_interval]))' },
      { source: 'matcher', expr: 'sum(rate(http_requests_total{service="auth", namespace=~"$namespace", code=~"5.."}[$__rate_interval])) or vector(0)' },
      { source: 'grouping', expr: 'sum by (instance_name) (process_resident_memory_bytes{service="cache", pod=~"$pod"})' },
    ];
    const problems = (await Promise.all(broken.map((query) => liveQueryProblems(prometheus!, query, variables('.*'))))).flat();
    expect(problems).toEqual([
      'metric: no series of http_requests_totl from webhooks',
      'matcher: http_requests_total has no label code',
      'grouping: groups by instance_name, which none of its series carries',
    ]);
  });

  it('should show the failure counters at 0 for each known label value before anything failed', async () => {
    const zeros = async (selector: string): Promise<string[]> => {
      const answer = await prometheus!.query(selector);
      if (answer.status !== 'success') throw new Error(answer.error);
      return answer.data.result.map(({ metric, value }) => `${metric.service} ${metric.topic ?? metric.provider} ${metric.type ?? ''} ${value[1]}`.replace('  ', ' ')).sort();
    };
    expect(await zeros(`kafka_publish_failures_total{namespace="${NAMESPACE}"}`)).toEqual([
      'auth notifications SendSmsNotificationEvent 0',
      'auth user-authentication UserLoggedInEvent 0',
      'webhooks ForeignProducts ProviderProductCreatedEvent 0',
      'webhooks Payments PaymentConfirmedEvent 0',
      'webhooks notifications SendSmsNotificationEvent 0',
    ]);
    expect(await zeros(`webhook_signature_failures_total{namespace="${NAMESPACE}"}`)).toEqual(['webhooks stripe 0', 'webhooks twilio 0']);
  });

  it('should keep every alert inactive while the platform is healthy, but for a latency alert that load explains', async () => {
    const alerts = (await prometheus!.alerts()).filter((alert) => !NEEDS_KUBE_STATE_METRICS.has(alert.labels.alertname!));
    const latency = alerts.filter((alert) => alert.labels.alertname! in LATENCY_ALERTS);
    expect(alerts.filter((alert) => !latency.includes(alert)).map((alert) => ({ ...alert.labels, state: alert.state, value: alert.value }))).toEqual([]);
    const pastLastBucket: string[] = [];
    for (const alert of latency) {
      const last = await lastFiniteBucket(LATENCY_ALERTS[alert.labels.alertname!]!, alert.labels.service!);
      if (!(Number(alert.value) < last)) pastLastBucket.push(`${alert.labels.alertname} ${alert.labels.service} ${alert.value} (last bucket ${last})`);
    }
    if (latency.length > 0) process.stdout.write(`latency alerts pending on this machine's load: ${latency.map((alert) => `${alert.labels.alertname} ${alert.labels.service} ${alert.value}`).join(', ')}\n`);
    expect(pastLastBucket).toEqual([]);
  });

  describe('faults', () => {
    it("should raise SubscriptionPlatformCacheRpcErrors when the cache's Redis stops", async () => {
      await redis!.stop();
      const alert = await eventually(activeAlert('SubscriptionPlatformCacheRpcErrors', { namespace: FAULT_NAMESPACE, service: 'cache' }), 60_000, 'SubscriptionPlatformCacheRpcErrors');
      expect(alert.labels.severity).toBe('critical');
    }, 70_000);

    it('should raise SubscriptionPlatformKafkaPublishFailures when Kafka stops', async () => {
      await kafka!.stop();
      const auth = httpsClient(platform!.targets.auth.url, platform!.targets.auth.ca);
      try {
        // Each publish gives up after its deadline (10 s) and answers 503.
        const answers = await Promise.all(
          [1, 2, 3].map(() => auth.request('/otp', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ phoneNumber: `+49151${randomInt(10_000_000, 100_000_000)}` }) })),
        );
        expect(answers.map((answer) => answer.status)).toEqual([503, 503, 503]);
      } finally {
        await auth.close();
      }
      const alert = await eventually(activeAlert('SubscriptionPlatformKafkaPublishFailures', { namespace: NAMESPACE, service: 'auth', topic: 'notifications' }), 30_000, 'SubscriptionPlatformKafkaPublishFailures');
      expect(alert.labels.severity).toBe('warning');
    }, 70_000);

    it('should raise SubscriptionPlatformWebhookSignatureFailures under a flood of bad Stripe signatures', async () => {
      const { url, apiKey } = platform!.targets.webhooks;
      const payload = JSON.stringify(stripeEvent('product.created', {}, `evt_${run}`));
      const forged = Stripe.webhooks.generateTestHeaderString({ payload, secret: 'whsec_not_the_platforms' });
      const statuses: number[] = [];
      for (let i = 0; i < 15; i++) {
        const response = await fetch(`${url}${PAYMENT_WEBHOOK_PATH}?code=${encodeURIComponent(apiKey)}`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': forged }, body: payload });
        statuses.push(response.status);
      }
      expect(new Set(statuses)).toEqual(new Set([400]));
      const alert = await eventually(activeAlert('SubscriptionPlatformWebhookSignatureFailures', { namespace: NAMESPACE, service: 'webhooks', provider: 'stripe' }), 30_000, 'SubscriptionPlatformWebhookSignatureFailures');
      expect(Number(alert.value)).toBeGreaterThan(10);
    }, 60_000);

    it('should raise SubscriptionPlatformGraphControllerNoLeader when another holder takes the Lease', async () => {
      const lock = createKubeLeaseLock({ api: adminKubeConfig().makeApiClient(CoordinationV1Api), namespace: kubeNamespace, name: 'graph-controller', timeoutMs: 5000 });
      await eventually(
        async () => {
          const current = await lock.get();
          if (current === undefined) return undefined;
          const now = new Date();
          const record = { holderIdentity: 'an-intruder', leaseDurationSeconds: 3600, leaseTransitions: current.record.leaseTransitions + 1, acquireTime: now, renewTime: now };
          return lock.update(record, current.resourceVersion).then(
            () => true,
            () => undefined,
          );
        },
        10_000,
        'the Lease taken over',
      );
      await eventually(activeAlert('SubscriptionPlatformGraphControllerNoLeader', { namespace: NAMESPACE }), 30_000, 'SubscriptionPlatformGraphControllerNoLeader');
    }, 60_000);
  });
});
