// The reverse proxy of docs/forward-auth/nginx.conf as a Pod of the cluster suite (issue 43): the
// nginx image of test/infra/images.sh (Debian's nginx, as www-data) running the documented file,
// delivered by a ConfigMap with only its lines marked `test:` changed, the certificate files
// mounted by a Secret where the file names them; in front of the chart's auth Service and an
// application Pod.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { docs, replaceExactly } from '../../forward-auth/proxies.js';
import { restrictedContainer, type Kube } from './cluster.js';

/** The name of the proxy's Pod, ConfigMap and Secret. */
export const PROXY = 'forward-auth-proxy';
/** The proxy's Pod labels: the auth chart's networkPolicy.extraIngressFrom admits them. */
export const PROXY_LABELS = { 'sp-e2e/forward-auth-proxy': 'true' };
/** Where nginx listens in its Pod: a process without root (and without NET_BIND_SERVICE) cannot bind 443. */
export const PROXY_PORT = 8443;
/** Debian's nginx runs as www-data. */
const WWW_DATA = 33;

export interface ForwardAuthProxy {
  namespace: string;
  /** The nginx image (localhost/subscription-platform/nginx:<key>). */
  image: string;
  /** The auth Service's DNS name (its certificate names it too) and port. */
  authHost: string;
  authPort: number;
  /** host:port of the application. */
  upstream: string;
  /** PEM: the proxy's certificate and key for the application's host, and the auth service's certificate (or its CA). */
  tls: { cert: string; key: string; authCa: string };
}

/** docs/forward-auth/nginx.conf with only its lines marked `test:` changed (the certificate files stay where it names them). */
function site(proxy: ForwardAuthProxy): string {
  return replaceExactly(readFileSync(join(docs, 'nginx.conf'), 'utf8'), [
    ['server auth.internal:5555;', `server ${proxy.authHost}:${proxy.authPort};`],
    ['server app.internal:8080;', `server ${proxy.upstream};`],
    ['listen 443 ssl;', `listen ${PROXY_PORT} ssl;`],
    ['proxy_ssl_name auth.internal;', `proxy_ssl_name ${proxy.authHost};`],
  ]);
}

/** The proxy's ConfigMap, Secret and Pod (Pod Security `restricted`, read-only root, /tmp its own), applied; resolves once it is Ready. */
export async function startForwardAuthProxy(cluster: Kube, proxy: ForwardAuthProxy): Promise<void> {
  const metadata = { name: PROXY, namespace: proxy.namespace };
  const container = {
    name: 'nginx',
    image: proxy.image,
    imagePullPolicy: 'Never',
    ports: [{ name: 'https', containerPort: PROXY_PORT }],
    securityContext: { ...restrictedContainer, runAsUser: WWW_DATA, runAsGroup: WWW_DATA, readOnlyRootFilesystem: true },
    readinessProbe: { tcpSocket: { port: PROXY_PORT }, periodSeconds: 1 },
    volumeMounts: [
      { name: 'site', mountPath: '/etc/nginx/conf.d', readOnly: true },
      { name: 'tls', mountPath: '/etc/nginx/tls', readOnly: true },
      { name: 'tmp', mountPath: '/tmp' },
    ],
  };
  const list = {
    apiVersion: 'v1',
    kind: 'List',
    items: [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata, data: { 'forward-auth.conf': site(proxy) } },
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata,
        stringData: { 'app.example.com.crt': proxy.tls.cert, 'app.example.com.key': proxy.tls.key, 'auth-ca.crt': proxy.tls.authCa },
      },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { ...metadata, labels: PROXY_LABELS },
        spec: {
          containers: [container],
          volumes: [
            { name: 'site', configMap: { name: PROXY } },
            { name: 'tls', secret: { secretName: PROXY } },
            { name: 'tmp', emptyDir: {} },
          ],
        },
      },
    ],
  };
  await cluster.kubectl(['apply', '-f', '-'], JSON.stringify(list));
  try {
    await cluster.kubectl(['-n', proxy.namespace, 'wait', `pod/${PROXY}`, '--for=condition=Ready', '--timeout=120s']);
  } catch (error) {
    const logs = await cluster.kubectl(['-n', proxy.namespace, 'logs', PROXY, '--tail', '20']).catch((failed: Error) => failed.message);
    throw new Error(`${(error as Error).message}\nnginx: ${logs}`);
  }
}

/** Removes the proxy's Pod, ConfigMap and Secret. */
export async function stopForwardAuthProxy(cluster: Kube, namespace: string): Promise<void> {
  await cluster.kubectl(['-n', namespace, 'delete', `pod/${PROXY}`, `configmap/${PROXY}`, `secret/${PROXY}`, '--ignore-not-found', '--wait']);
}
