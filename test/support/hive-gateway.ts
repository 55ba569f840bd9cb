import { fileURLToPath } from 'node:url';
import { freePorts } from './free-port.js';
import { infra } from './infra.js';
import { startTool, type ToolProcess } from './tool-process.js';

const gatewayDir = fileURLToPath(new URL('../../gateway/', import.meta.url));

export interface HiveGatewayOptions {
  /** The graph registry's base URL (its CDN paths are under it). */
  registryUrl: string;
  cdnKey: string;
  /** Registry__CdnTarget; `default` by default. */
  target?: string;
  /** How often the gateway fetches the supergraph again (tests keep it short). */
  pollingMs: number;
  port?: number;
}

/** A gateway's answer to a GraphQL request: its status and parsed body. */
export interface GatewayAnswer {
  status: number;
  body: { data?: Record<string, unknown> | null; errors?: Array<{ message: string }> };
}

/** POSTs a GraphQL request (with `headers`) to a gateway's endpoint `url` and returns the parsed answer. */
export async function queryGateway(url: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<GatewayAnswer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/graphql-response+json, application/json', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: AbortSignal.timeout(10_000),
  });
  return { status: response.status, body: (await response.json()) as GatewayAnswer['body'] };
}

/**
 * A client-credentials token of the services' Keycloak client (what the webhooks service sends):
 * the subgraph fixtures answer nothing else. `keycloakUrl` is the address whose issuer they trust.
 */
export async function servicesToken(keycloakUrl = infra('KEYCLOAK_URL')): Promise<string> {
  const response = await fetch(`${keycloakUrl}/realms/${infra('KEYCLOAK_REALM')}/protocol/openid-connect/token`, {
    method: 'POST',
    body: new URLSearchParams({ grant_type: 'client_credentials', client_id: infra('KEYCLOAK_SERVICES_CLIENT_ID'), client_secret: infra('KEYCLOAK_SERVICES_CLIENT_SECRET') }),
    signal: AbortSignal.timeout(5000),
  });
  if (!response.ok) throw new Error(`Keycloak answered ${response.status} to the client-credentials grant`);
  return ((await response.json()) as { access_token: string }).access_token;
}

export interface HiveGateway {
  /** The GraphQL endpoint. */
  url: string;
  port: number;
  /** POSTs a GraphQL request (with `headers`) and returns the parsed answer. */
  query(query: string, variables?: Record<string, unknown>, headers?: Record<string, string>): Promise<GatewayAnswer>;
  /** Resolves once /readiness answers 200 (a supergraph is loaded), waiting as long as the process makes progress. */
  ready(): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Hive Gateway 2.15.1 (npm `@graphql-hive/gateway`, MIT; installed into gateway/ by `make
 * install`) as a process, reading the registry's supergraph with its `hive` supergraph source —
 * the gateway nobody here wrote, configured as make up and the chart configure it
 * (gateway/gateway.config.mjs).
 */
export async function startHiveGateway(options: HiveGatewayOptions): Promise<HiveGateway> {
  const [port] = options.port === undefined ? await freePorts(1) : [options.port];
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: process.env.HOME ?? '/tmp',
    HIVE_CDN_ENDPOINT: `${options.registryUrl}/artifacts/v1/${options.target ?? 'default'}`,
    HIVE_CDN_KEY: options.cdnKey,
    POLLING: `${options.pollingMs}ms`,
    PORT: String(port),
    HOST: '127.0.0.1',
  };
  const bin = fileURLToPath(new URL('node_modules/@graphql-hive/gateway/dist/bin.js', `file://${gatewayDir}`));
  const tool: ToolProcess = startTool(process.execPath, [bin, 'supergraph', '--config-path', `${gatewayDir}gateway.config.mjs`], env);
  const base = `http://127.0.0.1:${port}`;
  await tool.waitForHttp(`${base}/healthcheck`);
  return {
    url: `${base}/graphql`,
    port: port!,
    query: (query, variables, headers) => queryGateway(`${base}/graphql`, query, variables, headers),
    ready: () => tool.waitForHttp(`${base}/readiness`),
    output: () => tool.output(),
    stop: () => tool.stop('SIGTERM'),
  };
}
