import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { V1Service } from '@kubernetes/client-node';
import { parse } from 'yaml';
import { prepareCharts, scenarios, type Charts, type K8sObject } from './support/helm.js';
import { kubernetesValidator, kubernetesVersions, prometheusOperatorValidators, schemaProblems, type Validate } from './support/k8s-schemas.js';
import { component, configMapOf, forComponent, ofKind, selects, type Container, type Deployment } from './support/manifests.js';
import { configVariables, repoRoot, services, type Service } from './support/service-config.js';
import { subcharts } from './support/values-schema.js';
import { parseGraphAnnotations } from '../../services/graph-controller/src/reconcile/annotations.js';

/** Variables whose values are secrets wherever they appear (each service's config.ts and README). */
const SECRET_VARIABLES = [
  'Oidc__ClientSecret',
  'Oidc__AdminCredentials__Password',
  'MONITOR_API_KEY',
  'WEBHOOKS_API_KEY',
  'WEBHOOKS_ADMIN_API_KEY',
  'PAYMENT_PROVIDER_API_KEY',
  'PAYMENT_PROVIDER_WEBHOOKS_SECRET',
  'SMS_PROVIDER_AUTH_TOKEN',
  'Registry__ApiKey',
];
const SECRET_NAME = /secret|password|passwd|token|api_?key|apikey|private|credential/i;
/** Identifiers that look random but are not secrets (the service READMEs list them as plain settings). */
const NOT_SECRET = new Set(['SMS_PROVIDER_ACCOUNT_SID', 'SMS_PROVIDER_MESSAGE_SERVICE_SID', 'Oidc__AdminCredentials__Username', 'SmsProvider__ValidateSignature']);
const SECRET_VALUE = [
  /-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----/,
  /\b(sk|rk)_(live|test)_[A-Za-z0-9]{8,}/,
  /\bwhsec_[A-Za-z0-9+/=]{8,}/,
  /\beyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./,
  /:\/\/[^/\s:@]*:[^/\s@]+@/, // credentials in a URL
];

/** Why a ConfigMap entry looks like a secret, if it does. */
function secretProblems(name: string, value: string): string[] {
  const problems: string[] = [];
  if (SECRET_VARIABLES.includes(name) || (SECRET_NAME.test(name) && !NOT_SECRET.has(name))) problems.push("a secret's name");
  if (SECRET_VALUE.some((pattern) => pattern.test(value))) problems.push('a secret-looking value');
  const compact = value.replace(/^[a-z]+:\/\//, '');
  const random = /^[A-Za-z0-9+/_=-]{32,}$/.test(compact) && /[0-9]/.test(compact) && /[a-zA-Z]/.test(compact);
  if (random && !NOT_SECRET.has(name)) problems.push('a long random-looking value');
  return problems;
}

/** Names and values in ConfigMaps that look like secrets. */
function secretsInConfigMaps(objects: readonly K8sObject[]): string[] {
  return ofKind<K8sObject & { data?: Record<string, string> }>(objects, 'ConfigMap').flatMap((map) =>
    Object.entries(map.data ?? {}).flatMap(([name, value]) => secretProblems(name, value).map((problem) => `ConfigMap/${map.metadata.name} ${name}: ${problem}`)),
  );
}

/** The Deployments of the platform's own services (not the optional Hive Gateway, checked on its own below). */
function serviceDeployments(objects: readonly K8sObject[]): Deployment[] {
  return ofKind<Deployment>(objects, 'Deployment').filter((deployment) => (services as readonly string[]).includes(component(deployment)));
}

function containerOf(deployment: Deployment): Container {
  return deployment.spec.template.spec.containers[0]!;
}

function portNumber(container: Container, name: string | number): number | undefined {
  return typeof name === 'number' ? name : container.ports?.find((port) => port.name === name)?.containerPort;
}

let charts: Charts;
let validators: { kubernetes: Validate[]; crds: Record<string, Validate> };
const rendered = new Map<string, K8sObject[]>();

/** The umbrella's scenarios: its defaults, then ci/*-values.yaml. */
const umbrellaScenarios = ['default', 'minimal-values.yaml', 'production-values.yaml', 'full-values.yaml'];

async function scenario(name: string): Promise<K8sObject[]> {
  if (!rendered.has(name)) {
    rendered.set(name, await charts.render(name === 'default' ? {} : { values: [join(charts.umbrella, 'ci', name)] }));
  }
  return rendered.get(name)!;
}

beforeAll(async () => {
  charts = await prepareCharts();
  validators = { kubernetes: kubernetesVersions.map((version) => kubernetesValidator(version)), crds: prometheusOperatorValidators() };
}, 60_000);

afterAll(() => charts?.close());

describe('the chart files', () => {
  it('should cover every ci scenario of the umbrella in this suite', () => {
    expect(['default', ...scenarios(charts.umbrella)].sort()).toEqual([...umbrellaScenarios].sort());
  });
});

describe('helm lint --strict', () => {
  it('should pass for the umbrella chart with its defaults and with each ci scenario', async () => {
    for (const name of umbrellaScenarios) {
      const args = ['lint', '--strict', charts.umbrella, ...(name === 'default' ? [] : ['-f', join(charts.umbrella, 'ci', name)])];
      const result = await charts.helm(args);
      expect({ name, code: result.code, output: result.code === 0 ? '' : result.stdout + result.stderr }).toEqual({ name, code: 0, output: '' });
    }
  });

  it.each(subcharts)('should pass for the %s subchart with its defaults and with each of its ci scenarios', async (name) => {
    const dir = charts.subchart(name);
    const runs = [[], ...scenarios(dir).map((file) => ['-f', join(dir, 'ci', file)])];
    expect(runs.length).toBeGreaterThan(1);
    for (const extra of runs) {
      const result = await charts.helm(['lint', '--strict', dir, ...extra]);
      expect({ extra, code: result.code, output: result.code === 0 ? '' : result.stdout + result.stderr }).toEqual({ extra, code: 0, output: '' });
    }
  });
});

describe('helm template output against the Kubernetes OpenAPI schemas', () => {
  it.each(umbrellaScenarios)('should validate every object of the umbrella scenario %s', async (name) => {
    const objects = await scenario(name);
    expect(objects.length).toBeGreaterThan(0);
    expect(schemaProblems(objects, validators)).toEqual([]);
  });

  it.each(subcharts)('should validate every object of the %s subchart, alone, in each of its ci scenarios', async (name) => {
    const dir = charts.subchart(name);
    for (const file of scenarios(dir)) {
      const objects = await charts.render({ chart: dir, values: [join(dir, 'ci', file)] });
      expect(ofKind(objects, 'Deployment')).toHaveLength(1);
      expect(schemaProblems(objects, validators)).toEqual([]);
    }
  });

  it('should catch a misspelt field and a wrong type (the validation is strict)', async () => {
    const objects = structuredClone(await scenario('minimal-values.yaml'));
    const deployment = forComponent<Deployment>(objects, 'Deployment', 'cache')!;
    (containerOf(deployment) as unknown as Record<string, unknown>).securityContex = {};
    (deployment.spec as Record<string, unknown>).replicas = 'two';
    const monitor = { apiVersion: 'monitoring.coreos.com/v1', kind: 'ServiceMonitor', metadata: { name: 'x' }, spec: { endpoints: [{ port: 'metrics', honorLabel: true }], selector: {} } };
    const problems = schemaProblems([deployment, monitor], validators);
    expect(problems.join('\n')).toMatch(/additionalProperty":"securityContex"/);
    expect(problems.join('\n')).toMatch(/replicas must be integer/);
    expect(problems.join('\n')).toMatch(/ServiceMonitor\/x\/spec\/endpoints\/0 must NOT have additional properties.*honorLabel/);
  });
});

describe('rendered workloads', () => {
  it.each(umbrellaScenarios)('should probe every service on its management port, and the cache with the gRPC health protocol (%s)', async (name) => {
    const objects = await scenario(name);
    for (const deployment of serviceDeployments(objects)) {
      const customReadiness = name === 'full-values.yaml' && component(deployment) === 'graph-registry';
      expectProbes(deployment, configMapOf(objects, deployment), customReadiness);
    }
  });

  it('should use a custom probe whole when one is given', async () => {
    const registry = forComponent<Deployment>(await scenario('full-values.yaml'), 'Deployment', 'graph-registry')!;
    expect(containerOf(registry).readinessProbe).toEqual({ httpGet: { path: '/readyz', port: 'management' }, periodSeconds: 3 });
    const noLiveness = await charts.render({ set: ['cache.livenessProbe.enabled=false'] });
    expect(containerOf(forComponent<Deployment>(noLiveness, 'Deployment', 'cache')!).livenessProbe).toBeUndefined();
  });

  it.each(umbrellaScenarios)('should run every pod and container non-root, read-only, without privileges or capabilities (%s)', async (name) => {
    const objects = await scenario(name);
    const deployments = serviceDeployments(objects);
    expect(deployments.length).toBeGreaterThan(0);
    for (const deployment of deployments) {
      const pod = deployment.spec.template.spec;
      expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, fsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
      [...pod.containers, ...(pod.initContainers ?? [])].forEach(expectSecureContainer);
      expect(pod.volumes?.find((volume) => volume.name === 'tmp')?.emptyDir).toBeDefined();
      const controller = component(deployment) === 'graph-controller';
      expect({ component: component(deployment), automount: pod.automountServiceAccountToken }).toEqual({ component: component(deployment), automount: controller });
      const account = ofKind<K8sObject & { automountServiceAccountToken?: boolean }>(objects, 'ServiceAccount').find((sa) => sa.metadata.name === pod.serviceAccountName);
      expect(account?.automountServiceAccountToken).toBe(controller);
    }
  });

  it('should bound the V8 heap from the memory limit: 320/8 MiB at 512Mi, proportionally elsewhere', async () => {
    const nodeOptions = async (set: string[]): Promise<string | undefined> => {
      const objects = await charts.render({ set });
      return containerOf(forComponent<Deployment>(objects, 'Deployment', 'cache')!).env?.find((e) => e.name === 'NODE_OPTIONS')?.value;
    };
    expect(await nodeOptions([])).toBe('--max-old-space-size=320 --max-semi-space-size=8');
    expect(await nodeOptions(['cache.resources.limits.memory=1Gi'])).toBe('--max-old-space-size=640 --max-semi-space-size=16');
    expect(await nodeOptions(['cache.resources.limits.memory=256Mi'])).toBe('--max-old-space-size=160 --max-semi-space-size=4');
    expect(await nodeOptions(['cache.resources.limits.memory=1000M'])).toBe('--max-old-space-size=595 --max-semi-space-size=14');
    expect(await nodeOptions(['cache.heap.auto=false'])).toBeUndefined();
  });

  it("should run auth's node:cluster workers from auth.workers, sharing the heap bound out among them", async () => {
    const auth = async (set: string[]) => {
      const objects = await charts.render({ values: [join(charts.umbrella, 'ci', 'production-values.yaml')], set: ['auth.resources.limits.memory=512Mi', ...set] });
      const deployment = forComponent<Deployment>(objects, 'Deployment', 'auth')!;
      return { workers: configMapOf(objects, deployment).Auth__Workers, nodeOptions: containerOf(deployment).env?.find((e) => e.name === 'NODE_OPTIONS')?.value };
    };
    expect(await auth([])).toEqual({ workers: '1', nodeOptions: '--max-old-space-size=320 --max-semi-space-size=8' });
    const two = ['auth.workers=2', 'auth.resources.requests.cpu=1', 'auth.resources.limits.cpu=2'];
    expect(await auth(two)).toEqual({ workers: '2', nodeOptions: '--max-old-space-size=160 --max-semi-space-size=4' });
    expect(await auth([...two, 'auth.resources.limits.cpu=2500m', 'auth.resources.requests.cpu=1500m'])).toMatchObject({ workers: '2' });
  });

  it('should trust a CA bundle from a Secret or a ConfigMap for outbound TLS: mounted read-only, named by NODE_EXTRA_CA_CERTS', async () => {
    const trust = async (set: string[]) => {
      const deployment = forComponent<Deployment>(await charts.render({ values: [join(charts.umbrella, 'ci', 'production-values.yaml')], set }), 'Deployment', 'auth')!;
      const container = containerOf(deployment);
      const mount = container.volumeMounts?.find((m) => m.name === 'ca-bundle');
      return {
        env: container.env?.find((e) => e.name === 'NODE_EXTRA_CA_CERTS')?.value,
        mount: mount && { path: mount.mountPath, readOnly: mount.readOnly },
        volume: deployment.spec.template.spec.volumes?.find((v) => v.name === 'ca-bundle'),
      };
    };
    expect(await trust([])).toEqual({ env: undefined, mount: undefined, volume: undefined });
    const fromSecret = await trust(['auth.caBundle.secretName=keycloak-ca']);
    expect(fromSecret).toEqual({
      env: '/etc/ssl/subscription-platform/ca-bundle.pem',
      mount: { path: '/etc/ssl/subscription-platform', readOnly: true },
      volume: { name: 'ca-bundle', secret: { secretName: 'keycloak-ca', items: [{ key: 'ca.crt', path: 'ca-bundle.pem' }] } },
    });
    const fromConfigMap = await trust(['auth.caBundle.configMapName=trust-bundle', 'auth.caBundle.key=bundle.pem']);
    expect(fromConfigMap.env).toBe('/etc/ssl/subscription-platform/ca-bundle.pem');
    expect(fromConfigMap.volume).toEqual({ name: 'ca-bundle', configMap: { name: 'trust-bundle', items: [{ key: 'bundle.pem', path: 'ca-bundle.pem' }] } });
  });

  it('should take every secret from the existing Secret and put none in a ConfigMap', async () => {
    for (const name of umbrellaScenarios) {
      const objects = await scenario(name);
      expect(ofKind(objects, 'Secret')).toEqual([]);
      expect(secretsInConfigMaps(objects)).toEqual([]);
      const secretVariables = ofKind<Deployment>(objects, 'Deployment').flatMap((d) => (containerOf(d).env ?? []).filter((e) => SECRET_VARIABLES.includes(e.name)));
      for (const variable of secretVariables) expect(variable.valueFrom?.secretKeyRef?.name).toMatch(/secrets$/);
    }
    const webhooks = containerOf(forComponent<Deployment>(await scenario('production-values.yaml'), 'Deployment', 'webhooks')!);
    expect(webhooks.env?.filter((e) => e.valueFrom?.secretKeyRef).map((e) => e.name).sort()).toEqual(
      ['Oidc__ClientSecret', 'PAYMENT_PROVIDER_API_KEY', 'PAYMENT_PROVIDER_WEBHOOKS_SECRET', 'SMS_PROVIDER_AUTH_TOKEN', 'STORE_URL', 'WEBHOOKS_ADMIN_API_KEY', 'WEBHOOKS_API_KEY'].sort(),
    );
  });

  it('should serve the webhooks admin API only with a key from the existing Secret, and configure reconciliation and the event log', async () => {
    const minimal = await scenario('minimal-values.yaml');
    const deployment = forComponent<Deployment>(minimal, 'Deployment', 'webhooks')!;
    expect((containerOf(deployment).env ?? []).map((e) => e.name)).not.toContain('WEBHOOKS_ADMIN_API_KEY');
    expect(configMapOf(minimal, deployment)).toMatchObject({ PaymentProvider__ReconcileIntervalSeconds: '300', Webhooks__EventLogDays: '7', Webhooks__EventLogMaxEvents: '100000', Webhooks__DeadAfterFailures: '10' });
    const production = containerOf(forComponent<Deployment>(await scenario('production-values.yaml'), 'Deployment', 'webhooks')!);
    expect(production.env?.find((e) => e.name === 'WEBHOOKS_ADMIN_API_KEY')?.valueFrom?.secretKeyRef).toEqual({ name: 'webhooks-secrets', key: 'WEBHOOKS_ADMIN_API_KEY' });
    const tuned = await charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set: ['webhooks.paymentProvider.reconcileIntervalSeconds=0', 'webhooks.eventLog.deadAfterFailures=3'] });
    expect(configMapOf(tuned, forComponent<Deployment>(tuned, 'Deployment', 'webhooks')!)).toMatchObject({ PaymentProvider__ReconcileIntervalSeconds: '0', Webhooks__DeadAfterFailures: '3' });
    await expect(charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set: ['webhooks.eventLog.days=0'] })).rejects.toThrow(/days/);
  });

  it('should notice a secret placed in a ConfigMap (the scan works)', async () => {
    const objects = await charts.render({
      set: ['cache.extraConfig.EXTRA_API_KEY=abc', 'cache.extraConfig.Extra__Url=redis://user:hunter2@redis:6379', 'cache.extraConfig.Extra__Stripe=sk_live_abcdefghijkl'],
    });
    expect(secretsInConfigMaps(objects)).toEqual([
      "ConfigMap/sp-cache EXTRA_API_KEY: a secret's name",
      'ConfigMap/sp-cache Extra__Stripe: a secret-looking value',
      'ConfigMap/sp-cache Extra__Url: a secret-looking value',
    ]);
  });

  it.each(umbrellaScenarios)('should set only variables the services read, and every one they require (%s)', async (name) => {
    const objects = await scenario(name);
    for (const deployment of serviceDeployments(objects)) {
      const service = component(deployment) as Service;
      const known = await configVariables(service);
      const set = new Set([...Object.keys(configMapOf(objects, deployment)), ...(containerOf(deployment).env ?? []).map((e) => e.name)]);
      const unknown = [...set].filter((variable) => !known.all.has(variable) && variable !== 'NODE_OPTIONS');
      const missing = [...known.required].filter((variable) => !set.has(variable));
      expect({ service, unknown, missing }).toEqual({ service, unknown: [], missing: [] });
    }
  });

  it('should configure each service with values its own configuration loader accepts', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sp-tls-'));
    try {
      writeFileSync(join(dir, 'tls.crt'), 'certificate');
      writeFileSync(join(dir, 'tls.key'), 'key');
      for (const name of ['minimal-values.yaml', 'production-values.yaml', 'full-values.yaml']) {
        const objects = await scenario(name);
        const results = await Promise.all(
          serviceDeployments(objects).map(async (deployment) => {
            const service = component(deployment) as Service;
            const load = await loaderOf(service);
            return { name, service, problems: problemsOf(() => load(podEnv(objects, deployment, dir))) };
          }),
        );
        for (const result of results) expect(result).toEqual({ ...result, problems: [] });
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The environment a pod of the Deployment gets, as the kubelet builds it: the ConfigMap, the
 * variables (Secret keys and downward-API fields stood in for), KUBERNETES_SERVICE_HOST, and the
 * TLS files of auth's mounted Secret as readable files in `tlsDir`.
 */
function podEnv(objects: readonly K8sObject[], deployment: Deployment, tlsDir: string): Record<string, string> {
  const env: Record<string, string> = { ...configMapOf(objects, deployment), KUBERNETES_SERVICE_HOST: '10.96.0.1' };
  for (const variable of containerOf(deployment).env ?? []) {
    env[variable.name] = variable.value ?? (variable.valueFrom?.fieldRef ? 'from-the-downward-api' : secretPlaceholder(variable.name));
  }
  if (env.Controller__LeaseNamespace) env.Controller__LeaseNamespace = 'platform';
  if (env.Tls__CertPath) Object.assign(env, { Tls__CertPath: join(tlsDir, 'tls.crt'), Tls__KeyPath: join(tlsDir, 'tls.key') });
  return env;
}

/** Probes of a Deployment: startup and liveness on /livez, readiness /readyz or the cache's gRPC health. */
function expectProbes(deployment: Deployment, config: Record<string, string>, customReadiness: boolean): void {
  const container = containerOf(deployment);
  expect({ component: component(deployment), management: portNumber(container, 'management') }).toEqual({ component: component(deployment), management: Number(config.Management__Port) });
  expect([container.startupProbe?.httpGet, container.livenessProbe?.httpGet]).toEqual([
    { path: '/livez', port: 'management' },
    { path: '/livez', port: 'management' },
  ]);
  expect(container.livenessProbe?.successThreshold).toBe(1);
  if (component(deployment) === 'cache') expectGrpcReadiness(container, config);
  else if (!customReadiness) expect(container.readinessProbe?.httpGet).toEqual({ path: '/readyz', port: 'management' });
}

/** The cache's readiness: the native gRPC probe on its gRPC port. */
function expectGrpcReadiness(container: Container, config: Record<string, string>): void {
  const port = container.readinessProbe?.grpc?.port;
  expect(port).toBe(portNumber(container, 'grpc'));
  expect(port).toBe(Number(config.Cache__Port));
}

function expectSecureContainer(container: Container): void {
  expect(container.securityContext).toMatchObject({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, privileged: false, seccompProfile: { type: 'RuntimeDefault' } });
  expect(container.securityContext?.capabilities?.drop).toContain('ALL');
  expect(container.volumeMounts).toContainEqual({ name: 'tmp', mountPath: '/tmp' });
  expect(container.resources?.requests?.cpu).toBeDefined();
  expect(container.resources?.requests?.memory).toBeDefined();
  expect(container.resources?.limits?.memory).toBeDefined();
}

/** What an existing Secret would hold for a variable: a URL with a password for URLs, else a key. */
function secretPlaceholder(name: string): string {
  // The webhooks check the Stripe key's form (its mode must match the events' livemode).
  if (name === 'PAYMENT_PROVIDER_API_KEY') return 'sk_test_fromTheExistingSecret';
  // The registry refuses a CDN key that is also an API key (a gateway's key could write).
  if (name === 'Registry__CdnKeys') return 'cdn-key-from-the-existing-secret';
  return /url/i.test(name) ? 'redis://:password-from-the-secret@redis.data:6379' : 'value-from-the-existing-secret';
}

type Loader = (env: Record<string, string>) => unknown;

/** The service's own loadConfig (src/config.ts). */
async function loaderOf(service: Service): Promise<Loader> {
  const module = (await import(`../../services/${service}/src/config.js`)) as { loadConfig: (env: Record<string, string>, host?: unknown) => unknown };
  const inCluster = { fileExists: () => true, readFile: () => 'platform', hostname: () => 'pod', homedir: () => '/home/node' };
  return (env) => module.loadConfig(env, inCluster);
}

function problemsOf(load: () => unknown): string[] {
  try {
    load();
    return [];
  } catch (err) {
    return (err as { problems?: string[] }).problems ?? [String(err)];
  }
}

describe('rendered Services, NetworkPolicies, monitors and permissions', () => {
  it('should name the cache gRPC port grpc with an appProtocol, and give every Service a metrics port', async () => {
    const objects = await scenario('minimal-values.yaml');
    const cache = forComponent<K8sObject & { spec: { ports: { name: string; port: number; appProtocol?: string; targetPort: string }[] } }>(objects, 'Service', 'cache')!;
    expect(cache.spec.ports).toContainEqual({ name: 'grpc', port: 7777, targetPort: 'grpc', protocol: 'TCP', appProtocol: 'grpc' });
    for (const service of ofKind<K8sObject & { spec: { ports: { name: string; targetPort: string }[] } }>(objects, 'Service')) {
      expect(service.spec.ports).toContainEqual(expect.objectContaining({ name: 'metrics', targetPort: 'management' }));
    }
  });

  it.each(umbrellaScenarios)('should give every workload a NetworkPolicy limiting ingress and egress (%s)', async (name) => {
    const objects = await scenario(name);
    const policies = ofKind<K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; policyTypes: string[] } }>(objects, 'NetworkPolicy');
    for (const deployment of ofKind<Deployment>(objects, 'Deployment')) {
      const policy = policies.find((p) => selects(p.spec.podSelector.matchLabels, deployment.spec.template.metadata.labels));
      expect({ component: component(deployment), policyTypes: policy?.spec.policyTypes }).toEqual({ component: component(deployment), policyTypes: ['Ingress', 'Egress'] });
    }
  });

  it("should let only the auth and webhooks pods reach the cache gRPC port, and the controller the registry (and each the chart's test Pod)", async () => {
    type Policy = K8sObject & { spec: { ingress: { ports: { port: string }[]; from?: { podSelector?: { matchLabels: Record<string, string> } }[] }[] } };
    const objects = await scenario('minimal-values.yaml');
    const callers = (target: string, port: string): (string | undefined)[] =>
      forComponent<Policy>(objects, 'NetworkPolicy', target)!
        .spec.ingress.filter((rule) => rule.ports.some((p) => p.port === port))
        .flatMap((rule) => (rule.from ?? [{}]).map((peer) => (peer.podSelector?.matchLabels['subscription-platform.io/test'] !== undefined ? 'helm test' : (peer.podSelector?.matchLabels['app.kubernetes.io/name'] ?? 'anyone'))));
    expect(callers('cache', 'grpc').sort()).toEqual(['auth', 'helm test', 'webhooks']);
    expect(callers('graph-registry', 'http')).toEqual(['graph-controller', 'helm test']);
    expect(callers('auth', 'https')).toEqual(['ingress-nginx', 'helm test']);
    expect(callers('webhooks', 'http')).toEqual(['ingress-nginx', 'helm test']);
  });

  it('should allow DNS and each service its dependencies on the way out', async () => {
    type Policy = K8sObject & { spec: { egress: { ports: { port: number }[]; to?: { podSelector?: { matchLabels: Record<string, string> } }[] }[] } };
    const objects = await scenario('minimal-values.yaml');
    for (const policy of ofKind<Policy>(objects, 'NetworkPolicy')) {
      expect(policy.spec.egress[0]!.ports.map((p) => p.port)).toEqual([53, 53]);
    }
    const ports = (name: string): number[] => forComponent<Policy>(objects, 'NetworkPolicy', name)!.spec.egress.flatMap((rule) => rule.ports.map((p) => p.port));
    expect(ports('auth')).toEqual(expect.arrayContaining([7777, 9092, 443]));
    expect(ports('webhooks')).toEqual(expect.arrayContaining([7777, 9092, 6379, 443]));
    expect(ports('graph-controller')).toEqual(expect.arrayContaining([5145, 443, 6443]));
    expect(ports('cache')).toEqual(expect.arrayContaining([6379]));
  });

  it('should create ServiceMonitors only when enabled, scraping the metrics port with the services own labels', async () => {
    for (const name of ['default', 'minimal-values.yaml', 'production-values.yaml']) {
      expect({ name, monitors: ofKind(await scenario(name), 'ServiceMonitor') }).toEqual({ name, monitors: [] });
    }
    const full = await scenario('full-values.yaml');
    type Monitor = K8sObject & { spec: { selector: { matchLabels: Record<string, string> }; endpoints: { port: string; path: string; honorLabels: boolean }[] } };
    const monitors = ofKind<Monitor>(full, 'ServiceMonitor');
    expect(monitors.map(component).sort()).toEqual([...services].sort());
    for (const monitor of monitors) {
      const service = ofKind(full, 'Service').find((s) => selects(monitor.spec.selector.matchLabels, s.metadata.labels));
      expect(service).toBeDefined();
      expect(monitor.spec.endpoints).toEqual([expect.objectContaining({ port: 'metrics', path: '/metrics', honorLabels: true })]);
      expect(monitor.metadata.labels?.release).toBe('kube-prometheus-stack');
    }
    const one = await charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set: ['auth.serviceMonitor.enabled=true'] });
    expect(ofKind(one, 'ServiceMonitor').map(component)).toEqual(['auth']);
  });

  it("should create the PrometheusRule only when enabled, with the platform's alerts and each runbook_url on the given base", async () => {
    for (const name of ['default', 'minimal-values.yaml', 'production-values.yaml']) {
      expect({ name, rules: ofKind(await scenario(name), 'PrometheusRule') }).toEqual({ name, rules: [] });
    }
    type Rule = K8sObject & { spec: { groups: { name: string; rules: { alert?: string; annotations?: Record<string, string> }[] }[] } };
    const [rule, ...others] = ofKind<Rule>(await scenario('full-values.yaml'), 'PrometheusRule');
    expect(others).toEqual([]);
    expect(rule!.metadata.labels?.release).toBe('kube-prometheus-stack');
    const shipped = parse(readFileSync(join(repoRoot, 'observability/prometheus/alerts.rules.yaml'), 'utf8')) as Rule['spec'];
    const withoutRunbooks = (groups: Rule['spec']['groups']): unknown =>
      groups.map((group) => ({ ...group, rules: group.rules.map((r) => ({ ...r, annotations: { ...r.annotations, runbook_url: undefined } })) }));
    expect(withoutRunbooks(rule!.spec.groups)).toEqual(withoutRunbooks(shipped.groups));
    for (const alert of rule!.spec.groups.flatMap((group) => group.rules)) {
      expect(alert.annotations?.runbook_url).toBe(`https://wiki.example.com/platform/runbooks#${alert.alert!.toLowerCase()}`);
    }
    const byDefault = ofKind<Rule>(await charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set: ['prometheusRule.enabled=true'] }), 'PrometheusRule');
    expect(byDefault[0]!.spec.groups[0]!.rules[0]!.annotations?.runbook_url).toMatch(/^https:\/\/github\.com\/subscription-platform\/subscription-platform\/blob\/main\/docs\/runbooks\.md#subscriptionplatform/);
  });

  it('should scale with an HPA instead of a fixed replica count when autoscaling, and keep a PDB', async () => {
    const objects = await scenario('production-values.yaml');
    for (const name of ['cache', 'auth', 'graph-registry', 'webhooks']) {
      const hpa = forComponent<K8sObject & { spec: { scaleTargetRef: { name: string }; minReplicas: number } }>(objects, 'HorizontalPodAutoscaler', name);
      const deployment = forComponent<Deployment>(objects, 'Deployment', name)!;
      expect(hpa?.spec.scaleTargetRef.name).toBe(deployment.metadata.name);
      expect(deployment.spec.replicas).toBeUndefined();
      expect(forComponent(objects, 'PodDisruptionBudget', name)).toBeDefined();
    }
    expect(forComponent<Deployment>(objects, 'Deployment', 'graph-controller')!.spec.replicas).toBe(2);
    expect(ofKind(await scenario('minimal-values.yaml'), 'HorizontalPodAutoscaler')).toEqual([]);
  });

  it('should give the controller exactly its permissions: Services, Events, its Lease and its ownership records', async () => {
    type Role = K8sObject & { rules: { apiGroups: string[]; resources: string[]; verbs: string[]; resourceNames?: string[] }[] };
    const minimal = await scenario('minimal-values.yaml');
    const clusterRoles = ofKind<Role>(minimal, 'ClusterRole');
    expect(clusterRoles).toHaveLength(1);
    expect(clusterRoles[0]!.rules).toEqual([
      { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ]);
    const lease = ofKind<Role>(minimal, 'Role')[0]!;
    expect(lease.metadata.namespace).toBe('platform');
    expect(lease.rules).toEqual([
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['sp-graph-controller'], verbs: ['get', 'update'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'create', 'update', 'delete'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['sp-graph-controller-registrations'], verbs: ['get'] },
    ]);
    const config = configMapOf(minimal, forComponent<Deployment>(minimal, 'Deployment', 'graph-controller')!);
    expect(config.Controller__LeaseName).toBe('sp-graph-controller');
    const bindings = ofKind<K8sObject & { subjects: { name: string }[] }>(minimal, 'ClusterRoleBinding');
    expect(bindings[0]!.subjects[0]!.name).toBe(forComponent<Deployment>(minimal, 'Deployment', 'graph-controller')!.spec.template.spec.serviceAccountName);
    const namespaced = await scenario('full-values.yaml');
    expect(ofKind(namespaced, 'ClusterRole')).toEqual([]);
    expect(ofKind(namespaced, 'Role').map((role) => role.metadata.namespace).sort()).toEqual(['platform', 'team-a', 'team-b']);
  });

  it('should carry the graph controller annotations on a Service only when asked, in a form the controller accepts', async () => {
    for (const service of ofKind(await scenario('minimal-values.yaml'), 'Service')) {
      expect(Object.keys(service.metadata.annotations ?? {}).filter((key) => key.startsWith('graph-registry.io/'))).toEqual([]);
    }
    const registry = forComponent(await scenario('full-values.yaml'), 'Service', 'graph-registry')! as unknown as V1Service;
    expect(parseGraphAnnotations(registry)).toEqual({ kind: 'graph', name: 'graph-registry', url: 'http://sp-graph-registry.platform.svc.cluster.local:5145/' });
  });

  it.each(['minimal-values.yaml', 'production-values.yaml'])('should point callers at this release own components (%s)', async (name) => {
    const objects = await scenario(name);
    const config = (service: string): Record<string, string> => configMapOf(objects, forComponent<Deployment>(objects, 'Deployment', service)!);
    const cache = forComponent(objects, 'Service', 'cache')!.metadata.name;
    expect(config('auth').Cache__Url).toBe(`${cache}:7777`);
    expect(config('webhooks').Cache__Url).toBe(`${cache}:7777`);
    expect(config('graph-controller').Registry__Url).toBe(`http://${forComponent(objects, 'Service', 'graph-registry')!.metadata.name}:5145`);
  });
});

describe('Hive Gateway (graph-registry.hiveGateway)', () => {
  type Policy = K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; ingress?: Array<{ from?: Array<{ podSelector?: { matchLabels: Record<string, string> } }> }> } };

  it('should run the gateway on the registry supergraph: its CDN path, a CDN key from a Secret, the polling interval, the config file make up runs', async () => {
    const objects = await scenario('full-values.yaml');
    const gateway = forComponent<Deployment>(objects, 'Deployment', 'hive-gateway')!;
    const container = containerOf(gateway);
    expect(container.image).toBe('ghcr.io/graphql-hive/gateway:2.15.1');
    const env = Object.fromEntries((container.env ?? []).map((variable) => [variable.name, variable.value ?? variable.valueFrom]));
    expect(env).toEqual({
      HIVE_CDN_ENDPOINT: 'http://sp-graph-registry.platform.svc:5145/artifacts/v1/default',
      HIVE_CDN_KEY: { secretKeyRef: { name: 'graph-registry-secrets', key: 'hive-cdn-key' } },
      POLLING: '15s',
      PORT: '4000',
    });
    // The registry holds the keys (a list, for rotation) from the same Secret; the key is never in a ConfigMap.
    const registry = forComponent<Deployment>(objects, 'Deployment', 'graph-registry')!;
    expect(containerOf(registry).env).toContainEqual({ name: 'Registry__CdnKeys', valueFrom: { secretKeyRef: { name: 'graph-registry-secrets', key: 'cdn-keys' } } });
    expect(configMapOf(objects, registry).Registry__CdnTarget).toBe('default');
    // The configuration file is the one make up and the federation tests run.
    const config = ofKind<K8sObject & { data: Record<string, string> }>(objects, 'ConfigMap').find((map) => map.metadata.name === 'sp-hive-gateway')!;
    expect(config.data['gateway.config.mjs']).toBe(readFileSync(join(repoRoot, 'gateway/gateway.config.mjs'), 'utf8'));
    expect(container.volumeMounts).toContainEqual({ name: 'config', mountPath: '/gateway/gateway.config.mjs', subPath: 'gateway.config.mjs', readOnly: true });
    const service = ofKind<K8sObject & { spec: { selector: Record<string, string>; ports: Array<{ name: string; port: number }> } }>(objects, 'Service').find((s) => s.metadata.name === 'sp-hive-gateway')!;
    expect(selects(service.spec.selector, gateway.spec.template.metadata.labels)).toBe(true);
    expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'http', port: 4000 })]);
  });

  it('should probe it on /healthcheck and /readiness, and run it non-root, read-only, without privileges', async () => {
    const gateway = forComponent<Deployment>(await scenario('full-values.yaml'), 'Deployment', 'hive-gateway')!;
    const container = containerOf(gateway);
    expect([container.startupProbe?.httpGet, container.livenessProbe?.httpGet, container.readinessProbe?.httpGet]).toEqual([
      { path: '/healthcheck', port: 'http' },
      { path: '/healthcheck', port: 'http' },
      { path: '/readiness', port: 'http' },
    ]);
    expectSecureContainer(container);
    expect(gateway.spec.template.spec.securityContext).toMatchObject({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } });
    expect(gateway.spec.template.spec.automountServiceAccountToken).toBe(false);
  });

  it("should let the gateway's pods reach the registry HTTP port, and only the webhooks (and the peers named) reach the gateway", async () => {
    const objects = await scenario('full-values.yaml');
    const policies = ofKind<Policy>(objects, 'NetworkPolicy');
    const gatewayLabels = forComponent<Deployment>(objects, 'Deployment', 'hive-gateway')!.spec.template.metadata.labels;
    const registryPolicy = policies.find((policy) => policy.metadata.name === 'sp-graph-registry')!;
    const registryPeers = registryPolicy.spec.ingress!.flatMap((rule) => rule.from ?? []);
    expect(registryPeers.some((peer) => peer.podSelector !== undefined && selects(peer.podSelector.matchLabels, gatewayLabels))).toBe(true);
    const gatewayPolicy = policies.find((policy) => selects(policy.spec.podSelector.matchLabels, gatewayLabels))!;
    const callers = gatewayPolicy.spec.ingress!.flatMap((rule) => rule.from ?? []).map((peer) => peer.podSelector?.matchLabels['app.kubernetes.io/name']);
    expect(callers).toEqual(['webhooks']);
  });

  it("should let the webhooks reach the gateway with the documented values: hive-gateway in their NetworkPolicy's toComponents", async () => {
    type Egress = K8sObject & { spec: { egress?: Array<{ ports?: Array<{ port: number | string }>; to?: Array<{ podSelector?: { matchLabels: Record<string, string> } }> }> } };
    const dir = mkdtempSync(join(tmpdir(), 'sp-gateway-'));
    try {
      const values = join(dir, 'values.yaml');
      const toComponents = [{ component: 'cache', port: 7777 }, { component: 'hive-gateway', port: 4000 }];
      writeFileSync(values, JSON.stringify({ webhooks: { networkPolicy: { egress: { toComponents } } } }));
      const objects = await charts.render({ values: [join(charts.umbrella, 'ci', 'full-values.yaml'), values] });
      const gatewayLabels = forComponent<Deployment>(objects, 'Deployment', 'hive-gateway')!.spec.template.metadata.labels;
      const webhooks = ofKind<Egress>(objects, 'NetworkPolicy').find((policy) => policy.metadata.name === 'sp-webhooks')!;
      const toGateway = webhooks.spec.egress!.filter((rule) => rule.to?.some((peer) => peer.podSelector !== undefined && selects(peer.podSelector.matchLabels, gatewayLabels)));
      expect(toGateway.map((rule) => rule.ports)).toEqual([[{ port: 4000, protocol: 'TCP' }]]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("should pull the gateway's image from global.imageRegistry when set, as every image of the platform", async () => {
    const objects = await charts.render({ values: [join(charts.umbrella, 'ci', 'full-values.yaml')], set: ['global.imageRegistry=mirror.example.com'] });
    const images = ofKind<Deployment>(objects, 'Deployment').map((deployment) => containerOf(deployment).image);
    expect(images).toContain('mirror.example.com/graphql-hive/gateway:2.15.1');
    expect(images.every((image) => image.startsWith('mirror.example.com/'))).toBe(true);
  });

  it('should deploy nothing of it by default, and refuse it without CDN keys for the registry', async () => {
    expect(forComponent(await scenario('production-values.yaml'), 'Deployment', 'hive-gateway')).toBeUndefined();
    const result = await charts.helm(['template', 'sp', charts.umbrella, '-f', join(charts.umbrella, 'ci', 'minimal-values.yaml'), '--set', 'graph-registry.hiveGateway.enabled=true']);
    expect(result.code).not.toBe(0);
    expect(result.stderr).toContain('graph-registry.cdn.existingSecretKey: is required while hiveGateway.enabled is true');
  });
});

describe('configuration changes roll the pods', () => {
  const checksums = async (set: string[]): Promise<Record<string, string>> => {
    const objects = await charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set });
    return Object.fromEntries(ofKind<Deployment>(objects, 'Deployment').map((d) => [component(d), d.spec.template.metadata.annotations?.['checksum/config'] ?? '']));
  };

  it('should change a component checksum annotation when its configuration changes, and only its own', async () => {
    const before = await checksums([]);
    expect(Object.values(before).every((sum) => /^[0-9a-f]{64}$/.test(sum))).toBe(true);
    const after = await checksums(['cache.capacity=5000']);
    expect(after.cache).not.toBe(before.cache);
    expect({ ...after, cache: before.cache }).toEqual(before);
    const logLevel = await checksums(['webhooks.logLevel=debug']);
    expect(logLevel.webhooks).not.toBe(before.webhooks);
  });

  it('should keep the checksum when something outside the configuration changes', async () => {
    expect(await checksums(['cache.podLabels.example=x', 'auth.replicaCount=2'])).toEqual(await checksums([]));
  });
});

describe('values validation', () => {
  const failure = async (set: string[], values: string[] = []): Promise<string> => {
    const result = await charts.helm(['template', 'sp', charts.umbrella, ...values.flatMap((file) => ['-f', join(charts.umbrella, 'ci', file)]), ...set.flatMap((pair) => ['--set', pair])]);
    expect(result.code).not.toBe(0);
    return result.stderr;
  };

  it('should refuse a CA bundle from both a Secret and a ConfigMap', async () => {
    expect(await failure(['auth.caBundle.secretName=a', 'auth.caBundle.configMapName=b'], ['production-values.yaml'])).toMatch(/auth\.caBundle: set secretName or configMapName, not both/);
  });

  it('should refuse auth workers the pod has no CPUs or memory for, saying which value to change', async () => {
    const production = ['production-values.yaml'];
    const workers = (set: string[]): Promise<string> => failure(['auth.workers=2', ...set], production);
    // The chart's defaults: a 50m request and a 1-CPU limit, for one process.
    const defaults = await workers([]);
    expect(defaults).toMatch(/auth\.resources\.limits\.cpu: 1 is less than one CPU for each of the 2 workers/);
    expect(defaults).toMatch(/auth\.resources\.requests\.cpu: 50m is less than one CPU, too little for 2 workers/);
    expect(await workers(['auth.resources.limits.cpu=1900m', 'auth.resources.requests.cpu=1'])).toMatch(/limits\.cpu: 1900m is less than one CPU for each/);
    expect(await workers(['auth.resources.limits.cpu=2', 'auth.resources.requests.cpu=1', 'auth.resources.limits.memory=200Mi'])).toMatch(/auth\.resources\.limits\.memory: 200Mi is less than 128Mi for each of the 2 workers/);
    expect(await failure(['auth.workers=0'], production)).toMatch(/workers.*minimum/s);
  });

  it('should refuse a string replica count', async () => {
    expect(await failure(['cache.replicaCount=two'])).toMatch(/cache.*replicaCount.*got string, want integer/s);
  });

  it('should refuse an unknown key, at any level', async () => {
    expect(await failure(['cache.replicaCont=2'])).toMatch(/additional properties 'replicaCont' not allowed/);
    expect(await failure(['cache.networkPolicy.egress.destinations.redis.port=6379'])).toMatch(/additional properties 'port' not allowed/);
    expect(await failure(['nonsense=1'])).toMatch(/additional properties 'nonsense' not allowed/);
  });

  it('should refuse the cache with 3 replicas on the memory backend, saying what to do', async () => {
    const message = await failure(['cache.replicaCount=3']);
    expect(message).toMatch(/VALUES VALIDATION \(cache\)/);
    expect(message).toMatch(/cache\.backend: memory keeps entries inside each pod, so 3 replicas would each hold a different cache; set backend=redis/);
    expect(await failure(['cache.autoscaling.enabled=true'])).toMatch(/cache\.autoscaling\.enabled: .*set backend=redis/);
    expect(await failure(['cache.backend=redis'])).toMatch(/cache\.redis\.url: backend redis needs the Redis address/);
  });

  it('should refuse Redis keyspace notification flags that Subscribe cannot work with, naming the missing ones', async () => {
    const redis = ['cache.backend=redis', 'cache.redis.url=redis://redis:6379'];
    expect(await failure([...redis, 'cache.redis.notifyKeyspaceEvents=Kx'])).toMatch(/cache\.redis\.notifyKeyspaceEvents: "Kx" lacks \$ge: Subscribe .* needs K\$gxe/);
    expect(await failure([...redis, 'cache.redis.notifyKeyspaceEvents=Ex$ge'])).toMatch(/"Ex\$ge" lacks K:/);
    // A stands for g$lshzxetd; the flags may come in any order.
    await expect(charts.render({ set: [...redis, 'cache.redis.notifyKeyspaceEvents=KA'] })).resolves.toBeDefined();
    await expect(charts.render({ set: [...redis, 'cache.redis.notifyKeyspaceEvents=exg$K'] })).resolves.toBeDefined();
  });

  it('should refuse a component without its existing Secret, listing every problem at once', async () => {
    const message = await failure(['auth.enabled=true']);
    const problems = message.split('\n').filter((line) => line.startsWith('  - '));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ {2}- auth\.existingSecret: is required; create a Secret .* holding the keys Oidc__ClientSecret, Oidc__AdminCredentials__Password/),
        '  - auth.publicBaseUrl: is required',
        '  - auth.oidc.serverUrl: is required',
        '  - auth.kafka.brokers: is required',
      ]),
    );
    expect(problems.length).toBeGreaterThanOrEqual(6);
  });

  it('should refuse webhooks without their public base URL and a memory store under several replicas', async () => {
    const message = await failure(['webhooks.publicBaseUrl=', 'webhooks.replicaCount=2'], ['minimal-values.yaml']);
    expect(message).toMatch(/webhooks\.publicBaseUrl: is required/);
    expect(message).toMatch(/webhooks\.store\.url: memory:\/\/ keeps the data inside each pod/);
  });

  it('should refuse components that call a disabled one without its address', async () => {
    const message = await failure(['cache.enabled=false', 'graph-registry.enabled=false'], ['minimal-values.yaml']);
    expect(message).toMatch(/auth\.cache\.url: the cache is disabled in this release/);
    expect(message).toMatch(/webhooks\.cache\.url: the cache is disabled in this release/);
    expect(message).toMatch(/graph-controller\.registry\.url: the graph registry is disabled/);
    await expect(charts.render({ values: [join(charts.umbrella, 'ci/minimal-values.yaml')], set: ['cache.enabled=false', 'auth.cache.url=cache.shared:7777', 'webhooks.cache.url=cache.shared:7777'] })).resolves.toBeDefined();
  });
});
