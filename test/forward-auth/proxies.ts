import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Agent, fetch } from 'undici';
import { eventually } from '../support/eventually.js';
import { freePort } from '../support/free-port.js';
import { infra } from '../support/infra.js';
import { startTool, type ToolProcess } from '../support/tool-process.js';

export const docs = fileURLToPath(new URL('../../docs/forward-auth/', import.meta.url));

/** What a proxy of the tests stands in front of. */
export interface ProxyTargets {
  /** The port the proxy listens on (HTTPS, 127.0.0.1): the auth replicas' public base URL names it. */
  port: number;
  /** The auth replicas (HTTPS on 127.0.0.1 with `cert`). */
  authPorts: readonly number[];
  /** The demo upstream (HTTP on 127.0.0.1). */
  upstreamPort: number;
  /** PEM certificate (self-signed for localhost and 127.0.0.1) and key: the proxy's own and the auth replicas'. */
  cert: string;
  key: string;
}

export interface RunningProxy {
  baseUrl: string;
  process: ToolProcess;
  stop(): Promise<void>;
}

export type StartProxy = (targets: ProxyTargets) => Promise<RunningProxy>;

/** `text` with each `[from, to]` replaced, failing when a `from` is not there exactly once (the documented file changed). */
export function replaceExactly(text: string, replacements: ReadonlyArray<readonly [string, string]>): string {
  let result = text;
  for (const [from, to] of replacements) {
    const count = result.split(from).length - 1;
    if (count !== 1) throw new Error(`"${from}" appears ${count} times in the documented configuration, not once`);
    result = result.replace(from, to);
  }
  return result;
}

function scratch(name: string, targets: Pick<ProxyTargets, 'cert' | 'key'>): { dir: string; certFile: string; keyFile: string } {
  const dir = mkdtempSync(join(tmpdir(), `forward-auth-${name}-`));
  const certFile = join(dir, 'cert.pem');
  const keyFile = join(dir, 'key.pem');
  writeFileSync(certFile, targets.cert);
  writeFileSync(keyFile, targets.key, { mode: 0o600 });
  return { dir, certFile, keyFile };
}

/** Waits until the proxy serves `path` (the public sign-in page) through to the upstream. */
async function ready(baseUrl: string, ca: string, process: ToolProcess, path = '/sign-in'): Promise<void> {
  const dispatcher = new Agent({ connect: { ca } });
  try {
    await eventually(() => fetch(`${baseUrl}${path}`, { dispatcher, signal: AbortSignal.timeout(2000) }).then((answer) => answer.status === 200, () => false), 20_000, `the proxy at ${baseUrl}`);
  } catch (err) {
    await process.stop('SIGKILL');
    throw new Error(`${(err as Error).message}:\n${process.output()}`);
  } finally {
    await dispatcher.close();
  }
}

/**
 * Debian's nginx running docs/forward-auth/nginx.conf as documented, with only its lines marked
 * `test:` changed (addresses, port, certificate files).
 */
export const startNginx: StartProxy = (targets) =>
  runNginx('nginx', targets, ({ certFile, keyFile }) =>
    replaceExactly(readFileSync(join(docs, 'nginx.conf'), 'utf8'), [
      ['server auth.internal:5555;', targets.authPorts.map((port) => `server 127.0.0.1:${port};`).join('\n    ')],
      ['server app.internal:8080;', `server 127.0.0.1:${targets.upstreamPort};`],
      ['listen 443 ssl;', `listen 127.0.0.1:${targets.port} ssl;`],
      ['/etc/nginx/tls/app.example.com.crt', certFile],
      ['/etc/nginx/tls/app.example.com.key', keyFile],
      ['/etc/nginx/tls/auth-ca.crt', certFile],
      ['proxy_ssl_name auth.internal;', 'proxy_ssl_name localhost;'],
    ]),
  );

/**
 * Debian's nginx (one worker) with a site configuration, included in a main configuration of the
 * test's own (no daemon, files in a scratch folder); `site` gets the files of `targets`'
 * certificate and key. Ready once `readyPath` answers 200 through it.
 */
export async function runNginx(name: string, targets: Pick<ProxyTargets, 'port' | 'cert' | 'key'>, site: (files: { certFile: string; keyFile: string }) => string, readyPath = '/sign-in'): Promise<RunningProxy> {
  const { dir, certFile, keyFile } = scratch(name, targets);
  writeFileSync(join(dir, 'site.conf'), site({ certFile, keyFile }));
  const temp = ['client_body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map((name) => `  ${name}_temp_path ${join(dir, name)};`).join('\n');
  writeFileSync(
    join(dir, 'nginx.conf'),
    `daemon off;\nworker_processes 1;\npid ${join(dir, 'nginx.pid')};\nerror_log stderr warn;\nevents { worker_connections 512; }\nhttp {\n  access_log off;\n${temp}\n  include ${join(dir, 'site.conf')};\n}\n`,
  );
  const process = startTool(infra('NGINX_BIN'), ['-p', `${dir}/`, '-c', join(dir, 'nginx.conf'), '-e', 'stderr']);
  const baseUrl = `https://127.0.0.1:${targets.port}`;
  await ready(baseUrl, targets.cert, process, readyPath);
  return { baseUrl, process, stop: () => process.stop('SIGTERM') };
}

/**
 * Caddy running docs/forward-auth/Caddyfile as documented, its `{$…}` placeholders set through the
 * environment (addresses, port, certificate files), its data and configuration folders in a
 * scratch folder.
 */
export const startCaddy: StartProxy = async (targets) => {
  const { dir, certFile, keyFile } = scratch('caddy', targets);
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: dir,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    APP_SITE: `https://127.0.0.1:${targets.port}`,
    APP_CERT: certFile,
    APP_KEY: keyFile,
    AUTH_UPSTREAMS: targets.authPorts.map((port) => `127.0.0.1:${port}`).join(' '),
    AUTH_CA: certFile,
    AUTH_TLS_NAME: 'localhost',
    APP_UPSTREAM: `127.0.0.1:${targets.upstreamPort}`,
    HTTP_PORT: String(await freePort()),
  };
  const caddy = startTool(infra('CADDY_BIN'), ['run', '--config', join(docs, 'Caddyfile'), '--adapter', 'caddyfile'], env);
  const baseUrl = `https://127.0.0.1:${targets.port}`;
  await ready(baseUrl, targets.cert, caddy);
  return { baseUrl, process: caddy, stop: () => caddy.stop('SIGTERM') };
};
