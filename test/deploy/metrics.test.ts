import { createHmac, randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import Stripe from 'stripe';
import { createCacheClient, stringSerializer } from '@sp/cache-client';
import { platformVersion } from '@sp/observability';
import { adminKubeConfig, ensureNamespace, uniqueName } from '../support/kube-apiserver.js';
import { infra } from '../support/infra.js';
import { startGraphqlGateway, type GraphqlGatewayFixture } from '../support/graphql-gateway.js';
import { startLocalizationService, type LocalizationServiceFixture } from '../support/localization-service.js';
import { stripeEvent } from '../support/stripe-event.js';
import { npmStart, startService, type ServiceProcess } from '../support/service-process.js';
import { buildService } from './support/build.js';
import { addExposition, EXTERNAL_METRICS, queryProblems, type Catalog } from './support/metrics-check.js';
import { alertQueries, dashboardQueries, dashboards } from './support/promql.js';
import { repoRoot, services, type Service } from './support/service-config.js';
import { serviceEnv, TEST_ACCOUNT_SID, TEST_KEYS } from './support/service-env.js';
import { HANG_GUARD_MS } from '../support/progress.js';

/**
 * Starts every service that has an entry point the way its container does (`node --import
 * ./dist/instrument.js dist/main.js` from its built dist) against the local dependencies, drives a
 * little traffic through each so labelled metrics get samples, reads every /metrics, and checks
 * each metric the Grafana dashboards and the alert rules name against what the services export.
 */

const withEntryPoint = services.filter((service) => existsSync(join(repoRoot, 'services', service, 'src/main.ts')));
const running = new Map<Service, ServiceProcess>();
const catalog: Catalog = new Map();
const expositions = new Map<Service, string>();
let gateway: GraphqlGatewayFixture | undefined;
let localization: LocalizationServiceFixture | undefined;
let tmp: string;

async function start(service: Service, deps: Parameters<typeof serviceEnv>[1]): Promise<ServiceProcess> {
  await buildService(service);
  const started = await startService({ name: service, ...npmStart(service), env: serviceEnv(service, deps) });
  running.set(service, started);
  return started;
}

function httpsPost(port: number, path: string, body: unknown, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      { host: '127.0.0.1', port, path, method: 'POST', rejectUnauthorized: false, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

/** Twilio's request signature: HMAC-SHA1 over the URL and the sorted form parameters, base64. */
function twilioSignature(token: string, url: string, params: Record<string, string>): string {
  const data = url + Object.keys(params).sort().map((key) => key + params[key]).join('');
  return createHmac('sha1', token).update(data).digest('base64');
}

async function waitFor(check: () => Promise<boolean>, timeoutMs: number, what: () => Promise<string> | string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${await what()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Traffic that gives each labelled metric of the dashboards and alerts a sample. */
const traffic: Record<Service, (service: ServiceProcess) => Promise<void>> = {
  async cache(service) {
    const client = createCacheClient<string>({ address: `127.0.0.1:${service.port}` }, stringSerializer);
    try {
      await client.set('deploy-test:key', 'value', 60_000);
      await client.get('deploy-test:key');
      await client.get('deploy-test:absent');
      await client.remove('deploy-test:key');
      await expect(client.get('')).rejects.toThrow();
    } finally {
      client.close();
    }
  },
  async 'graph-registry'(service) {
    const base = `http://127.0.0.1:${service.port}`;
    expect((await fetch(`${base}/health`)).status).toBe(200);
    expect((await fetch(`${base}/orders`, { headers: { 'x-api-key': 'wrong' } })).status).toBe(401);
    const post = await fetch(`${base}/deploy-test`, { method: 'POST', headers: { 'x-api-key': TEST_KEYS.api, 'content-type': 'text/plain' }, body: 'http://example.svc:4000/graphql' });
    expect(post.status).toBe(204);
  },
  async auth(service) {
    expect(await httpsPost(service.port!, '/otp', { phoneNumber: 'not a phone' })).toBe(400);
    expect(await httpsPost(service.port!, '/otp', { phoneNumber: '+14155552671' })).toBe(200);
    expect(await httpsPost(service.port!, '/otp', { phoneNumber: '+14155552671' })).toBe(429);
    expect(await httpsPost(service.port!, '/otp/verify', { phoneNumber: '+14155552671', code: '000000' }, { 'x-role-claim': 'client' })).toBe(400);
  },
  async webhooks(service) {
    const base = `http://127.0.0.1:${service.port}/api`;
    // A whole envelope (`created` and `livemode` included): the service refuses events without them with 400.
    const payload = JSON.stringify(stripeEvent('customer.created', { id: 'cus_1', object: 'customer' }, `evt_deploy_${Date.now()}`));
    const signature = new Stripe('sk_test_123').webhooks.generateTestHeaderString({ payload, secret: TEST_KEYS.stripeSecret });
    const stripe = (sig: string): Promise<Response> =>
      fetch(`${base}/PaymentProviderWebhookHandler?code=${TEST_KEYS.webhooksCode}`, { method: 'POST', headers: { 'content-type': 'application/json', 'stripe-signature': sig }, body: payload });
    expect((await stripe(signature)).status).toBe(200);
    expect((await stripe('t=1,v1=bad')).status).toBe(400);
    const sms = await fetch(`${base}/SmsProviderWebhookHandler?code=${TEST_KEYS.webhooksCode}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': 'bad' },
      body: new URLSearchParams({ From: '+14155552671', To: '+15555550100', Body: 'COMMANDS', MessageSid: 'SM1' }).toString(),
    });
    expect(sms.status).toBe(403);
    const url = `https://webhooks.example.com/api/SmsProviderWebhookHandler?code=${TEST_KEYS.webhooksCode}`;
    const params = { AccountSid: TEST_ACCOUNT_SID, From: '+14155552671', To: '+14155550100', Body: 'COMMANDS', MessageSid: `SM${randomUUID().replace(/-/g, '')}` }; // a new message each run: a MessageSid is processed once
    const signed = await fetch(`${base}/SmsProviderWebhookHandler?code=${TEST_KEYS.webhooksCode}`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': twilioSignature(TEST_KEYS.twilioToken, url, params) },
      body: new URLSearchParams(params).toString(),
    });
    expect(signed.status).toBe(200);
    expect((await fetch(`${base}/PaymentProviderWebhookHandler?code=wrong`, { method: 'POST', body: '{}' })).status).toBe(401);
  },
  async 'graph-controller'(service) {
    // Its counters start at 0 for every result and reason, so they carry their labels from the
    // start; ready means leading or following with the Service informer synced.
    await waitFor(async () => (await service.management('/readyz')).status === 200, 10_000, () => `the controller to be ready:\n${service.output.join('\n')}`);
  },
};

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'sp-metrics-'));
  gateway = await startGraphqlGateway();
  localization = await startLocalizationService();
  // The real kube-apiserver of make test, as its admin; a namespace of its own for the Lease and the watch.
  const kubeNamespace = uniqueName('deploy');
  await ensureNamespace(adminKubeConfig(), kubeNamespace);
  const kubeconfig = infra('KUBECONFIG_PATH');
  const deps: Parameters<typeof serviceEnv>[1] = { gatewayUrl: gateway.url, localizationUrl: localization.url, kubeconfig, kubeNamespace };
  for (const service of withEntryPoint) {
    const started = await start(service, deps);
    if (service === 'cache') deps.cacheAddress = `127.0.0.1:${started.port}`;
    if (service === 'graph-registry') deps.registryUrl = `http://127.0.0.1:${started.port}`;
  }
  for (const [service, process] of running) {
    await traffic[service](process);
    const metrics = await process.management('/metrics');
    expect(metrics.status).toBe(200);
    expositions.set(service, metrics.body);
    addExposition(catalog, service, metrics.body);
  }
  if (running.has('auth')) await publishFailure(deps);
}, HANG_GUARD_MS);

/**
 * A failed publish, for kafka_publish_failures_total's labels: a second authentication service
 * whose broker list names a closed port answers POST /otp with 503 after its publish deadline.
 */
async function publishFailure(deps: Parameters<typeof serviceEnv>[1]): Promise<void> {
  const env = { ...serviceEnv('auth', deps), MessageBroker__BrokerList: '127.0.0.1:9', MessageBroker__PublishTimeoutMs: '1000' };
  const auth = await startService({ name: 'auth', ...npmStart('auth'), env });
  try {
    expect(await httpsPost(auth.port!, '/otp', { phoneNumber: '+14155552672' })).toBe(503);
    addExposition(catalog, 'auth', (await auth.management('/metrics')).body);
  } finally {
    await auth.stop();
  }
}

afterAll(async () => {
  await Promise.all([...running.values()].map((service) => service.stop()));
  await Promise.all([gateway?.close(), localization?.close()]);
  rmSync(tmp, { recursive: true, force: true });
}, 60_000);

describe('metrics of the running services', () => {
  it('should start every service that has an entry point', () => {
    expect([...running.keys()]).toEqual(withEntryPoint);
    expect(withEntryPoint.length).toBeGreaterThan(0);
  });

  it('should label every sample of every service with its service name, process and Node.js metrics included', () => {
    for (const [service, text] of expositions) {
      const samples = text.split('\n').filter((line) => line !== '' && !line.startsWith('#'));
      expect(samples.filter((line) => !line.includes(`service="${service}"`))).toEqual([]);
      for (const metric of ['process_cpu_seconds_total', 'process_resident_memory_bytes', 'nodejs_heap_size_used_bytes', 'nodejs_eventloop_lag_p99_seconds']) {
        expect({ service, metric, exported: catalog.get(metric)?.services.has(service) }).toEqual({ service, metric, exported: true });
      }
    }
  });

  it('should name the platform version in each service\'s first log line and its build-info gauge', () => {
    const version = platformVersion();
    for (const [service, text] of expositions) {
      expect({ service, buildInfo: text.split('\n').filter((line) => line.startsWith('subscription_platform_build_info{')) }).toEqual({
        service,
        buildInfo: [`subscription_platform_build_info{version="${version}",service="${service}"} 1`],
      });
      const first = JSON.parse(running.get(service)!.output[0]!) as Record<string, unknown>;
      expect({ service, msg: first.msg, version: first.version }).toEqual({ service, msg: `${service} ${version} starting`, version });
    }
  });

  it.each(dashboards().map(({ file }) => file))('should export every metric the dashboard %s names, with the labels it selects and groups by', (file) => {
    const { dashboard } = dashboards().find((d) => d.file === file)!;
    expect(queryProblems(dashboardQueries(file, dashboard), catalog)).toEqual([]);
  });

  it('should export every metric the alert rules name, with the labels they select and group by', () => {
    const queries = alertQueries();
    expect(queries.length).toBeGreaterThan(0);
    expect(queryProblems(queries, catalog)).toEqual([]);
  });

  it('should only name metrics from outside the services that are listed with their source', () => {
    const named = [...dashboards().flatMap(({ file, dashboard }) => dashboardQueries(file, dashboard)), ...alertQueries()].map((q) => q.expr).join('\n');
    const outside = Object.keys(EXTERNAL_METRICS).filter((metric) => new RegExp(`\\b${metric}\\b`).test(named));
    expect(outside.sort()).toEqual(['kube_deployment_spec_replicas', 'kube_deployment_status_replicas_available', 'up']);
  });

  it('should refuse a metric no service exports, a label it lacks and the wrong service (the check works)', () => {
    const problems = queryProblems(
      [
        { source: 'typo', expr: 'sum(rate(cache_hitz_total{service="cache"}[$__rate_interval]))' },
        { source: 'label', expr: 'sum by (reason) (rate(http_requests_total{service="auth", code="500"}[5m]))' },
        { source: 'owner', expr: 'cache_items{service="auth"}' },
        { source: 'syntax', expr: 'sum(rate(http_requests_total[5m])' },
      ],
      catalog,
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        'typo: no service exports cache_hitz_total',
        expect.stringMatching(/^label: http_requests_total has no label code/),
        'label: groups by reason, which none of its metrics carries',
        'owner: auth does not export cache_items (exported by cache)',
        expect.stringMatching(/^syntax: parse error/),
      ]),
    );
  });
});
