// The charts' tests (`helm test`, platform-lib/templates/_test.tpl): one Pod per enabled component,
// rendered in every scenario of the umbrella, let in by the component's NetworkPolicy; and the
// Pod's own script run here with node against servers that answer as the components would (and as
// they would not), so a check that cannot fail, or that asks the wrong question, shows here
// before a cluster runs it.
import { spawn } from 'node:child_process';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import { createSecureServer, createServer as createHttp2Server, type Http2Server, type Http2ServerRequest, type Http2ServerResponse } from 'node:http2';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { generateSelfSignedCertificate } from '../../services/auth/src/tls.js';
import { freePort } from '../support/free-port.js';
import { prepareCharts, type Charts, type K8sObject } from './support/helm.js';
import { ofKind, selects, type Container, type Deployment, type PodSpec } from './support/manifests.js';
import { services } from './support/service-config.js';

type Pod = K8sObject & { spec: PodSpec & { restartPolicy: string } };
type Peer = { podSelector?: { matchLabels?: Record<string, string> }; namespaceSelector?: unknown };
type Policy = K8sObject & { spec: { podSelector: { matchLabels: Record<string, string> }; ingress: { ports: { port: string }[]; from?: Peer[] }[] } };

interface Check {
  name: string;
  url?: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  status?: number;
  bodyIncludes?: string;
  insecure?: boolean;
  env?: string[];
  grpcHealth?: string;
}

const scenarios = ['default', 'minimal-values.yaml', 'production-values.yaml', 'full-values.yaml'];
let charts: Charts;
const rendered = new Map<string, K8sObject[]>();

async function scenario(name: string): Promise<K8sObject[]> {
  if (!rendered.has(name)) rendered.set(name, await charts.render(name === 'default' ? {} : { values: [join(charts.umbrella, 'ci', name)] }));
  return rendered.get(name)!;
}

const testPods = (objects: readonly K8sObject[]): Pod[] => ofKind<Pod>(objects, 'Pod').filter((pod) => pod.metadata.annotations?.['helm.sh/hook'] === 'test');
const testPodOf = (objects: readonly K8sObject[], component: string): Pod => testPods(objects).find((pod) => pod.metadata.labels?.['subscription-platform.io/test'] === component)!;
const containerOf = (pod: Pod): Container & { command: string[] } => pod.spec.containers[0] as Container & { command: string[] };
const checksOf = (pod: Pod): Check[] => JSON.parse(containerOf(pod).env!.find((variable) => variable.name === 'CHECKS')!.value!) as Check[];

/** The test Pod's script, run here with `checks` and `env`: its exit code and output. */
async function runScript(pod: Pod, checks: readonly Check[], env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  const [node, flag, script] = containerOf(pod).command;
  expect([node, flag]).toEqual(['node', '-e']);
  const child = spawn(process.execPath, ['-e', script!], { env: { ...env, CHECKS: JSON.stringify(checks) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, output };
}

/** A check's URL pointed at a local server, path and query (with its ${VAR}: a URL leaves it as it is) kept. */
const local = (check: Check, port: number, scheme = 'http'): Check => {
  const url = new URL(check.url!);
  return { ...check, url: `${scheme}://127.0.0.1:${port}${url.pathname}${url.search}` };
};

/** A cleartext HTTP/2 server (not yet listening) answering every gRPC health Check with `serving`: 1 SERVING, 2 NOT_SERVING. */
function healthServer(serving: number): Http2Server {
  const server = createHttp2Server();
  server.on('stream', (stream, headers) => {
    expect(headers[':path']).toBe('/grpc.health.v1.Health/Check');
    stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
    stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }));
    stream.end(Buffer.from([0, 0, 0, 0, 2, 8, serving]));
  });
  return server;
}

interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP server on loopback answering every request with `status` and `body`, recording what it was sent. */
async function answering(status: number, body: string): Promise<{ port: number; seen: Seen[]; close(): Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk: Buffer) => (text += chunk.toString()));
    request.on('end', () => {
      seen.push({ method: request.method!, url: request.url!, headers: request.headers, body: text });
      response.writeHead(status, { 'content-type': 'application/json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { port, seen, close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
}

beforeAll(async () => {
  charts = await prepareCharts();
}, 60_000);

afterAll(() => charts?.close());

describe('the chart tests, rendered', () => {
  it.each(scenarios)('should have one test Pod per enabled component, on its own image, restricted, without a token (%s)', async (name) => {
    const objects = await scenario(name);
    const deployments = ofKind<Deployment>(objects, 'Deployment').filter((deployment) => (services as readonly string[]).includes(deployment.metadata.labels!['app.kubernetes.io/name']!));
    const pods = testPods(objects);
    expect(pods.map((pod) => pod.metadata.labels!['subscription-platform.io/test']).sort()).toEqual(deployments.map((deployment) => deployment.metadata.labels!['app.kubernetes.io/name']).sort());
    for (const deployment of deployments) {
      const component = deployment.metadata.labels!['app.kubernetes.io/name']!;
      const pod = testPodOf(objects, component);
      const container = containerOf(pod);
      expect({ component, hook: pod.metadata.annotations }).toEqual({ component, hook: { 'helm.sh/hook': 'test', 'helm.sh/hook-delete-policy': 'before-hook-creation,hook-succeeded' } });
      expect({ component, image: container.image }).toEqual({ component, image: deployment.spec.template.spec.containers[0]!.image });
      expect({ component, restartPolicy: pod.spec.restartPolicy, token: pod.spec.automountServiceAccountToken }).toEqual({ component, restartPolicy: 'Never', token: false });
      expect({ component, pod: pod.spec.securityContext }).toEqual({ component, pod: expect.objectContaining({ runAsNonRoot: true, seccompProfile: { type: 'RuntimeDefault' } }) });
      expect({ component, container: container.securityContext }).toEqual({
        component,
        container: expect.objectContaining({ runAsNonRoot: true, readOnlyRootFilesystem: true, allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } }),
      });
      expect({ component, limits: container.resources?.limits?.memory }).toEqual({ component, limits: '128Mi' });
      // Never one of the component's pods: no Service or Deployment selects it.
      for (const selector of [deployment.spec.selector.matchLabels, ...ofKind<K8sObject & { spec: { selector?: Record<string, string> } }>(objects, 'Service').map((service) => service.spec.selector ?? {})]) {
        expect({ component, selected: selects(selector, pod.metadata.labels) }).toEqual({ component, selected: false });
      }
    }
  });

  it.each(scenarios)("should let each test Pod through its component's NetworkPolicy, to the API port and the management port (%s)", async (name) => {
    const objects = await scenario(name);
    for (const pod of testPods(objects)) {
      const component = pod.metadata.labels!['subscription-platform.io/test']!;
      const policy = ofKind<Policy>(objects, 'NetworkPolicy').find((candidate) => candidate.spec.podSelector.matchLabels['app.kubernetes.io/name'] === component);
      if (policy === undefined) continue;
      const admitted = policy.spec.ingress.filter((rule) => rule.from === undefined || rule.from.some((peer) => peer.namespaceSelector === undefined && peer.podSelector !== undefined && selects(peer.podSelector.matchLabels ?? {}, pod.metadata.labels)));
      expect({ component, ports: admitted.flatMap((rule) => rule.ports.map((port) => port.port)).sort() }).toEqual({
        component,
        ports: (component === 'graph-controller' ? ['management'] : ['management', { cache: 'grpc', auth: 'https' }[component] ?? 'http']).sort(),
      });
    }
  });

  it('should ask each component one real question: the cache SERVING, auth 401 without a cookie, the registry with its key, an unsigned Stripe event refused by the signature check', async () => {
    const objects = await scenario('minimal-values.yaml');
    const questions: Record<string, string[]> = Object.fromEntries(
      testPods(objects).map((pod): [string, string[]] => [pod.metadata.labels!['subscription-platform.io/test']!, checksOf(pod).map((check) => check.grpcHealth ?? `${check.method ?? 'GET'} ${check.url} ${check.status}`)]),
    );
    expect(questions).toEqual({
      cache: ['GET http://sp-cache:9464/readyz 200', 'sp-cache:7777'],
      auth: ['GET http://sp-auth:9464/readyz 200', 'GET https://sp-auth:5555/auth 401'],
      'graph-registry': ['GET http://sp-graph-registry:9464/readyz 200', 'GET http://sp-graph-registry:5145/ 200'],
      webhooks: ['GET http://sp-webhooks:9464/readyz 200', 'POST http://sp-webhooks:5000/api/PaymentProviderWebhookHandler?code=${WEBHOOKS_API_KEY} 400'],
      'graph-controller': ['GET http://sp-graph-controller:9464/readyz 200', 'GET http://sp-graph-controller:9464/metrics 200'],
    });
    // The API keys from the component's existing Secret, and nothing else of it.
    const secretEnv = (component: string) => containerOf(testPodOf(objects, component)).env!.filter((variable) => variable.valueFrom !== undefined);
    expect(secretEnv('graph-registry')).toEqual([{ name: 'MONITOR_API_KEY', valueFrom: { secretKeyRef: { name: 'graph-registry-secrets', key: 'MONITOR_API_KEY' } } }]);
    expect(secretEnv('webhooks')).toEqual([{ name: 'WEBHOOKS_API_KEY', valueFrom: { secretKeyRef: { name: 'webhooks-secrets', key: 'WEBHOOKS_API_KEY' } } }]);
    expect(secretEnv('cache')).toEqual([]);
  });
});

describe("the chart tests' script, run with node", () => {
  it('should send the unsigned Stripe event as JSON with the key in the query and no signature, and pass only on the signature check refusing it', async () => {
    const pod = testPodOf(await scenario('minimal-values.yaml'), 'webhooks');
    const check = checksOf(pod)[1]!;
    for (const [status, body, code] of [
      [400, '{"error":"invalid signature"}', 0],
      [415, '{"error":"unsupported media type"}', 1], // the refusal before the signature check
      [400, '{"error":"malformed event"}', 1],
      [200, '{"received":true}', 1],
    ] as const) {
      const server = await answering(status, body);
      try {
        const outcome = await runScript(pod, [local(check, server.port)], { WEBHOOKS_API_KEY: 'k&y=1' });
        expect({ status, body, code: outcome.code }).toEqual({ status, body, code });
        const [seen] = server.seen;
        expect(seen!.method).toBe('POST');
        expect(seen!.url).toBe('/api/PaymentProviderWebhookHandler?code=k%26y%3D1');
        expect(seen!.headers['content-type']).toBe('application/json');
        expect(seen!.headers['stripe-signature']).toBeUndefined();
        expect(JSON.parse(seen!.body)).toMatchObject({ object: 'event', type: 'checkout.session.completed' });
      } finally {
        await server.close();
      }
    }
  });

  it('should ask the registry with the API key and pass on its graph list only', async () => {
    const pod = testPodOf(await scenario('minimal-values.yaml'), 'graph-registry');
    const check = checksOf(pod)[1]!;
    for (const [status, body, code] of [
      [200, '{"graphs":{}}', 0],
      [401, '{"error":"invalid api key"}', 1],
    ] as const) {
      const server = await answering(status, body);
      try {
        expect({ status, code: (await runScript(pod, [local(check, server.port)], { MONITOR_API_KEY: 'the-key' })).code }).toEqual({ status, code });
        expect(server.seen[0]!.headers['x-api-key']).toBe('the-key');
      } finally {
        await server.close();
      }
    }
  });

  it("should call auth over https whatever its certificate, print a line per check, and fail when one check fails", async () => {
    const pod = testPodOf(await scenario('minimal-values.yaml'), 'auth');
    const [readyz, auth] = checksOf(pod) as [Check, Check];
    const { cert, key } = await generateSelfSignedCertificate();
    const server = createSecureServer({ cert, key, allowHTTP1: true }, (request: Http2ServerRequest, response: Http2ServerResponse) => {
      response.writeHead(request.headers.cookie === undefined ? 401 : 200).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const ready = await answering(503, '{"status":"unready","failing":["keycloak"]}');
    try {
      const { port } = server.address() as { port: number };
      const outcome = await runScript(pod, [local(readyz, ready.port), local(auth, port, 'https')]);
      expect(outcome.code).toBe(1);
      expect(outcome.output.trim().split('\n')).toEqual([
        expect.stringMatching(/^FAILED ready \(\/readyz of the management port\): status 503, expected 200: .*keycloak/),
        'ok     GET /auth without a session cookie is refused: status 401',
      ]);
    } finally {
      await ready.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it('should check the cache with a real gRPC health call, failing on NOT_SERVING and on a closed port', async () => {
    const pod = testPodOf(await scenario('minimal-values.yaml'), 'cache');
    const check = checksOf(pod).find((candidate) => candidate.grpcHealth !== undefined)!;
    for (const [serving, code] of [
      [1, 0],
      [2, 1],
    ] as const) {
      const server = healthServer(serving);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      try {
        const { port } = server.address() as { port: number };
        expect({ serving, code: (await runScript(pod, [{ ...check, grpcHealth: `127.0.0.1:${port}` }])).code }).toEqual({ serving, code });
      } finally {
        await new Promise<void>((resolve) => server.close(() => resolve()));
      }
    }
    // A port nothing listens on: refused, tried again for ROUTE_WAIT_MS (1 s here), then failed.
    const closed = await runScript(pod, [{ ...check, grpcHealth: '127.0.0.1:1' }], { ROUTE_WAIT_MS: '1000' });
    expect(closed.code).toBe(1);
    expect(closed.output).toMatch(/^FAILED the gRPC health check .*ECONNREFUSED/);
  });

  // Right after `helm install --wait` the Pods are ready, but kube-proxy may not route the new
  // Service to them yet and refuses its connections (the cold CI run's upgrade test: auth's
  // checks got ECONNREFUSED from the Service 9 s after the install).
  it('should try a refused connection again until the Service answers, for an HTTP and a gRPC check', async () => {
    const pod = testPodOf(await scenario('minimal-values.yaml'), 'cache');
    const [readyz, health] = checksOf(pod) as [Check, Check];
    const [httpPort, grpcPort] = [await freePort(), await freePort()];
    const http = createServer((_request, response) => response.end('{"status":"ready"}'));
    const grpc = healthServer(1);
    // Both start listening a while after the script: until then their connections are refused.
    const listenLater = setTimeout(() => {
      http.listen(httpPort, '127.0.0.1');
      grpc.listen(grpcPort, '127.0.0.1');
    }, 2500);
    try {
      const outcome = await runScript(pod, [local(readyz, httpPort), { ...health, grpcHealth: `127.0.0.1:${grpcPort}` }]);
      expect({ code: outcome.code, output: outcome.output.trim().split('\n') }).toEqual({ code: 0, output: [expect.stringMatching(/^ok +ready/), expect.stringMatching(/^ok .*SERVING$/)] });
    } finally {
      clearTimeout(listenLater);
      await Promise.all([http, grpc].map((server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))));
    }
  });
});
